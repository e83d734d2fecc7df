#!/usr/bin/env bash
# Install, move, run: `cmake --install` to a temporary prefix, move the prefix,
# then from another folder with the build tree off PATH run a real gloo DDP job (the Python
# shim must come from the moved prefix and report init_ok) and a real-NCCL program (the
# preload from the moved prefix must report its init failure); then the same from the .deb
# that `cpack -G DEB` builds, unpacked with dpkg-deb -x, whose dependencies are checked.
#   install_test.sh SOURCE_DIR BUILD_DIR [NCCL_PROBE]
set -euo pipefail
source_dir=$1 build_dir=$2 nccl_probe=${3:-}
python=/usr/bin/python3
work=$(mktemp -d /tmp/ddplaunch-install-test.XXXXXX)
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
pass() { echo "ok: $*"; }

cat > "$work/ddp_job.py" <<'PY'
import os, sys, time
import torch, torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel
dist.init_process_group("gloo")
shim = sys.modules.get("ddplaunch_shim")
print("SHIM_FROM", shim.__file__ if shim else "none", flush=True)
print("PRELOAD", os.environ.get("LD_PRELOAD", "none"), flush=True)
model = DistributedDataParallel(torch.nn.Linear(8, 8))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(5):
    opt.zero_grad(); model(torch.randn(4, 8)).sum().backward(); opt.step()
t = torch.tensor([dist.get_rank() + 1.0]); dist.all_reduce(t)
print("SUM", int(t.item()), flush=True)
time.sleep(1.5)  # let the launcher see every rank running after init
dist.destroy_process_group()
PY

# check_prefix NAME PREFIX: the DDP job and the NCCL program run from PREFIX/bin/ddplaunch.
check_prefix() {
  local name=$1 prefix=$2 out
  mkdir -p "$work/run-$name"
  cd "$work/run-$name"
  out=$(env -u PYTHONPATH -u LD_PRELOAD PATH="$prefix/bin:/usr/bin:/bin" \
        timeout 120 ddplaunch --standalone --nproc-per-node 2 -- "$python" "$work/ddp_job.py" 2>&1) ||
    { fail "$name: the DDP job failed:"; echo "$out"; return; }
  grep -q "SHIM_FROM $prefix/share/ddplaunch/python/ddplaunch_shim.py" <<<"$out" &&
    pass "$name: the Python shim comes from the prefix" ||
    { fail "$name: the Python shim does not come from $prefix:"; echo "$out"; }
  grep -q "PRELOAD $prefix/lib/ddplaunch/libddplaunch_nccl_preload.so" <<<"$out" &&
    pass "$name: LD_PRELOAD names the prefix's preload" || { fail "$name: LD_PRELOAD:"; echo "$out"; }
  grep -q "all 2 ranks finished init (init_ok)" <<<"$out" && [ "$(grep -c 'SUM 3' <<<"$out")" -eq 2 ] &&
    pass "$name: gloo DDP job ran, both ranks reported init_ok" || { fail "$name: init_ok/sum:"; echo "$out"; }
  if [ -n "$nccl_probe" ]; then
    cp "$nccl_probe" "$work/run-$name/nccl_probe"
    out=$(env -u LD_PRELOAD PATH="$prefix/bin:/usr/bin:/bin" \
          timeout 120 ddplaunch --standalone --nproc-per-node 1 --init-restarts 0 -- ./nccl_probe 2>&1) || true
    # Without a GPU NCCL's init fails: the report proves the moved preload wrapped it.
    if grep -q "ncclCommInitRank failed" <<<"$out"; then
      pass "$name: the NCCL preload from the prefix reported ncclCommInitRank"
    elif grep -q "ncclCommInitRank: no error" <<<"$out"; then
      pass "$name: NCCL init succeeded here (GPU); preload path checked above"
    else
      fail "$name: no NCCL init report:"; echo "$out"
    fi
  fi
  cd "$work"
}

# 1. cmake --install, then move the prefix.
cmake --install "$build_dir" --prefix "$work/installed" >/dev/null
mv "$work/installed" "$work/moved"
for f in bin/ddplaunch bin/ddplaunch-srun lib/ddplaunch/libddplaunch_nccl_preload.so \
         share/ddplaunch/python/ddplaunch_shim.py share/ddplaunch/python/ddplaunch_wait.py \
         share/ddplaunch/python/autoload/sitecustomize.py \
         share/ddplaunch/configs/default.yaml share/man/man1/ddplaunch.1 share/bash-completion/completions/ddplaunch; do
  [ -e "$work/moved/$f" ] || fail "install: $f is missing"
done
grep -qF -- '\fB\-\-nproc\-per\-node\fR' "$work/moved/share/man/man1/ddplaunch.1" && pass "man page lists the flags" ||
  fail "man page has no --nproc-per-node"
(source "$work/moved/share/bash-completion/completions/ddplaunch"
 COMP_WORDS=(ddplaunch --nproc); COMP_CWORD=1; _ddplaunch; [[ " ${COMPREPLY[*]} " == *" --nproc-per-node "* ]]) &&
  pass "bash completion completes --nproc" || fail "bash completion does not complete --nproc"
check_prefix moved "$work/moved"
# No library search path of the launcher's own (built or installed): it needs only glibc, and
# a RUNPATH with an empty entry made the loader look for libc.so.6 in the working directory.
for bin in "$build_dir/launcher/ddplaunch" "$work/moved/bin/ddplaunch"; do
  paths=$(readelf -d "$bin" | grep -E 'RPATH|RUNPATH' || true)
  [ -z "$paths" ] && pass "no RPATH/RUNPATH in $bin" || fail "$bin has a library search path: $paths"
done
# glibc's libc and loader only: libm's loading would cost every start ~10 page faults, and
# one std::lround is enough to bring it back (launcher/no_libm.cpp, base/small_math.h).
if [ "$(uname -m)" = x86_64 ]; then
  needed=$(readelf -d "$build_dir/launcher/ddplaunch" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | sort | tr '\n' ' ')
  [ "$needed" = "ld-linux-x86-64.so.2 libc.so.6 " ] && pass "ddplaunch needs only libc and the loader" ||
    fail "ddplaunch needs more than libc: $needed(a libm function? see launcher/no_libm.cpp)"
fi
mkdir -p "$work/planted" && cp /bin/true "$work/planted/libc.so.6"
searched=$(cd "$work/planted" && LD_DEBUG=libs "$work/moved/bin/ddplaunch" --version 2>&1 >/dev/null)
grep -qE 'trying file=(\./)?libc\.so\.6|trying file=[^/]' <<<"$searched" &&
  fail "ddplaunch looked for a library in the working directory: $searched" ||
  pass "ddplaunch never looks in the working directory for its libraries"
# The srun wrapper runs the ddplaunch installed next to it, wherever the prefix went.
printed=$(PATH=/usr/bin:/bin "$work/moved/bin/ddplaunch-srun" --ddplaunch-print -N 2 -- ./train 2>&1)
grep -qF "$work/moved/bin/ddplaunch --slurm" <<<"$printed" && pass "ddplaunch-srun uses the ddplaunch beside it" ||
  fail "ddplaunch-srun: $printed"

# 2. The .deb: built by cpack, dependencies from dpkg-shlibdeps, unpacked and run. Uncompressed:
# gzip of the ~240 MB RelWithDebInfo binary is ~10 s of CPU (two thirds of cpack's), and what
# is checked (the files, Depends, a job run from the unpacked tree) is the same in either form.
(cd "$build_dir" && timeout 300 cpack -G DEB -D CPACK_DEBIAN_COMPRESSION_TYPE=none -B "$work/deb-out" >/dev/null) ||
  fail "cpack -G DEB failed"
deb=$(ls "$work"/deb-out/*.deb 2>/dev/null | head -1)
if [ -n "$deb" ]; then
  depends=$(dpkg-deb -f "$deb" Depends)
  # The launcher carries spdlog, fmt, yaml-cpp, Boost and libstdc++ inside (nothing to load at start): glibc
  # is what dpkg-shlibdeps must find, and none of those may be asked for.
  grep -q "libc6" <<<"$depends" || fail "deb: Depends lacks libc6: $depends"
  for lib in libspdlog libyaml-cpp libboost-filesystem; do
    grep -q "$lib" <<<"$depends" && fail "deb: Depends asks for $lib although it is linked in: $depends"
  done
  pass "deb: Depends: $depends"
  dpkg-deb -x "$deb" "$work/deb-root"
  check_prefix deb "$work/deb-root/usr"
else
  fail "no .deb was produced"
fi

[ "$failures" -eq 0 ] && echo "install_test: all checks passed" || { echo "install_test: $failures failure(s)"; exit 1; }
