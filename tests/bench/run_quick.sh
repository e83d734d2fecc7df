#!/usr/bin/env bash
# Smoke test for the benchmark scripts: runs `bench/run overhead --quick` or `bench/run fault-matrix --quick`,
# requires exit 0, a Markdown table, and (fault matrix) no process left behind and a restart that worked.
# Usage: run_quick.sh overhead|fault-matrix REPO   (DDPLAUNCH_BIN / FAKE_WORKER_BIN name the binaries under test)
set -u
which="$1" repo="$2"
out="$(timeout 100 "$repo/bench/run" "$which" --quick 2>&1)"
rc=$?
printf '%s\n' "$out"
fail() { echo "run_quick.sh: $which --quick: $*" >&2; exit 1; }
[ "$rc" = 0 ] || fail "exited $rc"
case "$which" in
  overhead)
    grep -Eq '^\| ddplaunch \| [0-9.]+ \|' <<<"$out" || fail "no ddplaunch row in the overhead table"
    grep -Eq '^\| ddplaunch \| 2 nodes .* \| [0-9.]+ \|' <<<"$out" || fail "no restart-latency row"
    ;;
  fault-matrix)
    rows="$(grep -c '^| .* | ddplaunch | ' <<<"$out")"
    [ "$rows" = 4 ] || fail "expected 4 ddplaunch rows, got $rows"
    grep -q '^| one rank fails init once | ddplaunch | succeeded |' <<<"$out" || fail "the fail-once job did not succeed after a restart"
    if grep '^| .* | ddplaunch | ' <<<"$out" | grep -vq '| none |'; then fail "a row left processes behind"; fi
    if grep -q 'hung until killed\|harness error' <<<"$out"; then fail "a row hung or the harness failed"; fi
    ;;
  *) fail "unknown tool" ;;
esac
echo "run_quick.sh: $which --quick passed"
