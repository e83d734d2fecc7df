#!/usr/bin/env bash
# Installs, idempotently, every Debian package the build and the tests need.
# Safe to run again: apt-get skips what is already installed.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config
  lld  # links the test binaries (tests/CMakeLists.txt): a third of ld.bfd's time
  libboost-dev libboost-filesystem-dev libboost-system-dev
  libspdlog-dev libfmt-dev libyaml-cpp-dev libcli11-dev
  libgtest-dev googletest libssl-dev nlohmann-json3-dev
  libtorch-dev libgloo-dev python3-torch
  iproute2 nftables procps time
  elfutils gdb
  openssh-client openssh-server
  etcd-server etcd-client
  # python3-etcd: torch's etcd-v2 rendezvous backend (torchrun --rdzv-backend etcd-v2), which
  # bench/run master-loss runs side by side with ddplaunch's etcd backend.
  python3-etcd
  # chromium: headless, for tests/integration/support/check_timeline_page.py, which opens the job
  # timeline page (launcher/timeline/timeline_page.html) in it and checks what it drew.
  chromium
)

# --with-slurm: also the Slurm daemons and client for tests/clusters/slurm-test-cluster.sh.
for arg in "$@"; do
  case "$arg" in
    --with-slurm) packages+=(slurmctld slurmd slurm-client munge) ;;
    *) echo "install-deps: unknown option '$arg' (known: --with-slurm)" >&2; exit 2 ;;
  esac
done

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ "${#missing[@]}" -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages already installed"
  exit 0
fi

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
