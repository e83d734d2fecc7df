#!/usr/bin/env bash
# Fail-once worker for the restart benchmark and the fault matrix: in generation 0 every rank writes
# up.0.RANK; rank $BENCH_FAIL_RANK fails in init: once all $WORLD_SIZE ranks are up (NCCL's init
# fails only once every rank has reached it; at most 10 s) it prints NCCL's init error, as a real
# ncclCommInitRank failure does, and exits 3 -- without that line it would be the program's own error
# in setup, which is not restarted without --max-restarts; the others wait silently like ranks
# blocked in init. In generation >= 1 every rank records its start and exits 0.
# Times are CLOCK_REALTIME ($EPOCHREALTIME, no fork) written to files in $BENCH_STAMP_DIR.
gen="${DDPLAUNCH_GENERATION:-${TORCHELASTIC_RESTART_COUNT:-0}}"
dir="${BENCH_STAMP_DIR:-/tmp}"
if [ "$gen" = 0 ]; then
  echo "$EPOCHREALTIME" >"$dir/up.0.$RANK"
  if [ "$RANK" = "${BENCH_FAIL_RANK:-1}" ]; then
    for ((round = 0; round < 1000; round++)); do  # bounded: 1000 x 10 ms
      up=0
      for ((r = 0; r < ${WORLD_SIZE:-1}; r++)); do [ -e "$dir/up.0.$r" ] && up=$((up + 1)); done
      [ "$up" -ge "${WORLD_SIZE:-1}" ] && break
      sleep 0.01
    done
    echo "$EPOCHREALTIME" >"$dir/fail.$RANK"
    echo "NCCL error in ncclCommInitRank: unhandled system error (fail_once.sh, rank $RANK)" >&2
    exit 3
  fi
  exec sleep 3600
fi
echo "$EPOCHREALTIME" >"$dir/start.$gen.$RANK"
echo "rank $RANK started in generation $gen"
