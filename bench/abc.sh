#!/usr/bin/env bash
# Before/after for the client start-up changes (ADR 0010), in one run: for each
# directory of binaries given, callgrind's instruction count and perf's task
# clock and page faults of `berth resolve --json` and `berth-hook
# session-start`, then their whole-process medians interleaved with git.
#
#   bench/abc.sh /tmp/berth-before /tmp/berth-lto target/release
set -euo pipefail
dirs=("$@")
source "$(dirname "$0")/env.sh"
cd "$proj"
machine
race=("git rev-parse --show-toplevel")
for d in "${dirs[@]}"; do
  for c in " resolve --json" "-hook session-start"; do
    cmd="$d/berth$c"
    ir=$(valgrind --tool=callgrind --callgrind-out-file=/dev/null $cmd <"$payload" 2>&1 >/dev/null | awk '/Collected/ {print $4}')
    ps=$(perf stat -r 200 -e task-clock,page-faults $cmd <"$payload" 2>&1 >/dev/null |
      awk '/task-clock/ {t=$1} /page-faults/ {f=$1} END {print t " ms task clock, " f " page faults"}')
    echo "$cmd: $ir instructions, $ps"
    race+=("$cmd")
  done
done
"$berth_load" race --runs "${RUNS:-600}" --stdin "$payload" "${race[@]}"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
