#!/usr/bin/env bash
# Fail-once worker for the restart benchmark and the fault matrix: in generation 0 rank $BENCH_FAIL_RANK
# fails in init (mode fail: prints NCCL's init error, as a real ncclCommInitRank failure does, and
# exits 3 -- without that line it would be the program's own error in setup, which is not restarted
# without --max-restarts; mode hang: sleep); the others wait silently like ranks blocked in init. In generation >= 1 every rank records its start and exits 0.
# Times are CLOCK_REALTIME ($EPOCHREALTIME, no fork) written to files in $BENCH_STAMP_DIR.
mode="${1:-fail}"
gen="${DDPLAUNCH_GENERATION:-${TORCHELASTIC_RESTART_COUNT:-0}}"
dir="${BENCH_STAMP_DIR:-/tmp}"
if [ "$gen" = 0 ]; then
  if [ "$RANK" = "${BENCH_FAIL_RANK:-1}" ]; then
    if [ "$mode" = hang ]; then exec sleep 3600; fi
    echo "$EPOCHREALTIME" >"$dir/fail.$RANK"
    echo "NCCL error in ncclCommInitRank: unhandled system error (fail_once.sh, rank $RANK)" >&2
    exit 3
  fi
  exec sleep 3600
fi
echo "$EPOCHREALTIME" >"$dir/start.$gen.$RANK"
echo "rank $RANK started in generation $gen"
