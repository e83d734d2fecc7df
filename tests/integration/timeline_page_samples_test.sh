#!/usr/bin/env bash
# The timeline page template (launcher/timeline/timeline_page.html) against the hand-written
# traces in support/timeline_samples, each opened in real headless Chromium: a job with a
# restart, a running job with open slices and job text that tries to end the script, events
# the page must skip, and a truncated trace that must show the error box. Exit 77 (skipped)
# without Chromium.
set -euo pipefail
src=${1:?usage: timeline_page_samples_test.sh SOURCE_DIR}
support=$src/tests/integration/support
samples=$support/timeline_samples
template=$src/launcher/timeline/timeline_page.html
command -v chromium >/dev/null || command -v chromium-browser >/dev/null || {
  echo "skipped: no chromium on PATH (scripts/install-deps.sh installs it)"; exit 77; }
work=$(mktemp -d /tmp/timeline-samples-XXXXXX)
trap 'rm -rf "$work"' EXIT
check() {
  local sample=$1; shift
  /usr/bin/python3 "$support/fill_timeline_page.py" "$template" "$samples/$sample.json" "$work/$sample.html"
  echo "== $sample"
  /usr/bin/python3 "$support/check_timeline_page.py" "$work/$sample.html" "$@"
}
check restart_2nodes_4ranks --nodes 2 --ranks 4 --min-generations 2 --expect-restart \
  --expect-root-cause "rank 3 (node 1, host-b) exited 1"
check running_open_slices --nodes 3 --ranks 6 --min-generations 2 --expect-restart --expect-root-cause "no failure"
check odd_events --nodes 1 --ranks 1 --min-generations 1
check malformed_truncated --expect-render-error
