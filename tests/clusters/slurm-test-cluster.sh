#!/usr/bin/env bash
# A real two-node Slurm cluster on loopback for tests (/work/shared/recipes/slurm-loopback.md):
# munged (only if not already running), slurmctld, and two slurmd (-N n1, -N n2), all under DIR.
# Installs nothing: run scripts/install-deps.sh --with-slurm first. Needs root.
set -euo pipefail

usage() {
  cat <<'USAGE'
usage: slurm-test-cluster.sh start|stop|status DIR

  start DIR   write DIR/slurm.conf, start munged (unless one runs), slurmctld and slurmd
              n1/n2 (both NodeAddr 127.0.0.1), wait up to 30 s for both nodes idle.
              Then: export SLURM_CONF=DIR/slurm.conf; srun -N 2 --ntasks-per-node=1 hostname
  stop DIR    cancel jobs, kill only the daemons whose pids are in DIR (and munged only
              when this script started it: DIR/munged.started)
  status DIR  show each daemon and sinfo; exit 0 when all run, 3 otherwise
Ports: slurmctld 16817, slurmd 17001/17002 (one cluster per machine at a time).
USAGE
}

die() { echo "slurm-test-cluster: $*" >&2; exit 1; }

case "${1:-}" in -h|--help) usage; exit 0 ;; esac
[ "$#" -eq 2 ] || { usage >&2; exit 2; }
action="$1"
mkdir -p "$2" 2>/dev/null || true
[ -d "$2" ] || die "cannot create directory '$2'"
D="$(cd "$2" && pwd)"
export SLURM_CONF="$D/slurm.conf"
MUNGE_PID_FILE=/run/munge/munged.pid
CTLD_PORT=16817
NODE_PORTS=(17001 17002)

# pid_alive PIDFILE NAME: prints the pid when the file names a live process called NAME.
pid_alive() {
  local pid
  [ -f "$1" ] || return 1
  pid="$(tr -dc 0-9 < "$1")"
  [ -n "$pid" ] && [ -r "/proc/$pid/comm" ] && [ "$(cat "/proc/$pid/comm")" = "$2" ] || return 1
  echo "$pid"
}

# stop_pids PIDFILE:NAME...: SIGTERM to each live pid whose process is NAME (all at once,
# so the daemons shut down in parallel), wait up to 10 s in all, then SIGKILL what is left.
stop_pids() {
  local spec pid i alive pids=() names=() files=()
  for spec in "$@"; do
    if pid="$(pid_alive "${spec%%:*}" "${spec##*:}")"; then
      kill -TERM "$pid" 2>/dev/null || true
      pids+=("$pid"); names+=("${spec##*:}"); files+=("${spec%%:*}")
    else
      echo "  ${spec##*:}: not running (${spec%%:*})"
    fi
  done
  for i in $(seq 100); do
    alive=0
    for pid in "${pids[@]}"; do [ -d "/proc/$pid" ] && alive=1; done
    [ "$alive" -eq 0 ] && break
    sleep 0.1
  done
  for i in "${!pids[@]}"; do
    if [ -d "/proc/${pids[$i]}" ]; then
      echo "  ${names[$i]} (pid ${pids[$i]}) ignored SIGTERM for 10 s; sending SIGKILL"
      kill -KILL "${pids[$i]}" 2>/dev/null || true
    fi
    echo "  ${names[$i]} (pid ${pids[$i]}) stopped"
    rm -f "${files[$i]}"
  done
}

write_conf() {
  cat > "$SLURM_CONF" <<CONF
ClusterName=t
SlurmctldHost=localhost
SlurmctldPort=$CTLD_PORT
SlurmUser=root
AuthType=auth/munge
StateSaveLocation=$D/state
SlurmdSpoolDir=$D/spool/%n
SlurmdPidFile=$D/slurmd.%n.pid
SlurmctldPidFile=$D/slurmctld.pid
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
ReturnToService=2
SchedulerType=sched/builtin
SelectType=select/linear
MpiDefault=none
SlurmctldLogFile=$D/ctld.log
SlurmdLogFile=$D/slurmd.%n.log
NodeName=n1 NodeHostname=localhost NodeAddr=127.0.0.1 Port=${NODE_PORTS[0]} CPUs=2 State=UNKNOWN
NodeName=n2 NodeHostname=localhost NodeAddr=127.0.0.1 Port=${NODE_PORTS[1]} CPUs=2 State=UNKNOWN
PartitionName=p Nodes=n1,n2 Default=YES MaxTime=INFINITE State=UP
CONF
}

start_munged() {
  if pid_alive "$MUNGE_PID_FILE" munged >/dev/null; then
    echo "  munged: already running (pid $(pid_alive "$MUNGE_PID_FILE" munged)), not ours"
    return 0
  fi
  mkdir -p /run/munge /var/lib/munge /var/log/munge /etc/munge
  if [ ! -f /etc/munge/munge.key ]; then
    dd if=/dev/urandom bs=1 count=1024 of=/etc/munge/munge.key status=none
    chmod 400 /etc/munge/munge.key
  fi
  chown -R munge:munge /etc/munge /run/munge /var/lib/munge /var/log/munge
  runuser -u munge -- munged || die "munged failed to start; see /var/log/munge/munged.log"
  local i pid=""
  for i in $(seq 50); do
    pid="$(pid_alive "$MUNGE_PID_FILE" munged)" && break
    sleep 0.1
  done
  [ -n "$pid" ] || die "munged started but wrote no pid to $MUNGE_PID_FILE within 5 s"
  echo "$pid" > "$D/munged.started"
  echo "  munged: started (pid $pid)"
}

# Everything this script may have started, newest first; used by stop and on a failed start.
stop_all() {
  if pid_alive "$D/slurmctld.pid" slurmctld >/dev/null; then
    timeout 10 scancel --quiet --partition=p >/dev/null 2>&1 || true
  fi
  stop_pids "$D/slurmd.n2.pid:slurmd" "$D/slurmd.n1.pid:slurmd" "$D/slurmctld.pid:slurmctld"
  if [ -f "$D/munged.started" ]; then
    # Ours only if the pid we recorded is still the running munged.
    if [ "$(pid_alive "$MUNGE_PID_FILE" munged || true)" = "$(tr -dc 0-9 < "$D/munged.started")" ]; then
      stop_pids "$MUNGE_PID_FILE:munged"
    else
      echo "  munged: the one we started is gone; leaving any other alone"
    fi
    rm -f "$D/munged.started"
  fi
}

start() {
  for b in munged slurmctld slurmd sinfo srun scancel; do
    command -v "$b" >/dev/null 2>&1 ||
      die "'$b' not found: install Slurm first (scripts/install-deps.sh --with-slurm)"
  done
  [ "$(id -u)" -eq 0 ] || die "needs root (slurmd runs jobs as their users; SlurmUser=root)"
  if pid_alive "$D/slurmctld.pid" slurmctld >/dev/null; then
    die "a cluster already runs from $D (slurmctld pid $(pid_alive "$D/slurmctld.pid" slurmctld)); use status or stop"
  fi
  local port
  for port in "$CTLD_PORT" "${NODE_PORTS[@]}"; do
    if ss -Hltn "sport = :$port" 2>/dev/null | grep -q .; then
      die "TCP port $port is already in use (another test cluster? see: ss -ltnp 'sport = :$port')"
    fi
  done

  echo "slurm-test-cluster: starting in $D"
  mkdir -p "$D/state" "$D/spool/n1" "$D/spool/n2"
  write_conf
  start_munged
  slurmctld -f "$SLURM_CONF" || { stop_all; die "slurmctld failed to start; see $D/ctld.log"; }
  slurmd -f "$SLURM_CONF" -N n1 || { stop_all; die "slurmd n1 failed to start; see $D/slurmd.n1.log"; }
  slurmd -f "$SLURM_CONF" -N n2 || { stop_all; die "slurmd n2 failed to start; see $D/slurmd.n2.log"; }

  # Bounded wait (30 s) for both nodes to register idle.
  local i states=""
  for i in $(seq 60); do
    states="$(timeout 5 sinfo -h -N -o '%N %t' 2>/dev/null | sort | tr '\n' ' ' || true)"
    [ "$states" = "n1 idle n2 idle " ] && break
    sleep 0.5
  done
  if [ "$states" != "n1 idle n2 idle " ]; then
    echo "slurm-test-cluster: nodes not idle after 30 s (sinfo: '${states}'); last log lines:" >&2
    tail -n 5 "$D/ctld.log" "$D/slurmd.n1.log" "$D/slurmd.n2.log" >&2 || true
    stop_all >&2
    exit 1
  fi
  echo "slurm-test-cluster: up (n1, n2 idle). Use: export SLURM_CONF=$SLURM_CONF"
}

status() {
  local rc=0 name file pid
  for name in slurmctld slurmd.n1 slurmd.n2; do
    file="$D/$name.pid"
    if pid="$(pid_alive "$file" "${name%%.*}")"; then
      echo "$name: running (pid $pid)"
    else
      echo "$name: not running"; rc=3
    fi
  done
  if [ -f "$D/munged.started" ]; then echo "munged: started by this script (pid $(cat "$D/munged.started"))"
  elif pid="$(pid_alive "$MUNGE_PID_FILE" munged)"; then echo "munged: running (pid $pid), not ours"
  else echo "munged: not running"; rc=3; fi
  if pid_alive "$D/slurmctld.pid" slurmctld >/dev/null; then
    timeout 5 sinfo -N -o '%N %t %P' 2>&1 || rc=3
  fi
  return "$rc"
}

case "$action" in
  start) start ;;
  stop) echo "slurm-test-cluster: stopping $D"; stop_all ;;
  status) status ;;
  *) usage >&2; exit 2 ;;
esac
