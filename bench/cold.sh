#!/usr/bin/env bash
# Cold start: from no daemon to the first answer of `berth resolve --json`
# (which starts berthd itself). Goal ≤ 50 ms. hyperfine stops the daemon
# (and waits for its lock) before every run.
#
#   cargo build --release --workspace --bins
#   bench/cold.sh               # RUNS=50
set -euo pipefail
source "$(dirname "$0")/env.sh"
cd "$proj"
machine
hyperfine -N --runs "${RUNS:-50}" --prepare "$bin/berth daemon stop" \
  --export-json "$tmp/cold.json" "$bin/berth resolve --json" >/dev/null
python3 - "$tmp/cold.json" <<'PY'
import json, statistics, sys
t = json.load(open(sys.argv[1]))["results"][0]["times"]
print(f"cold start (no daemon -> first answer): median {statistics.median(t)*1000:.2f} ms, "
      f"min {min(t)*1000:.2f} ms, max {max(t)*1000:.2f} ms, {len(t)} runs")
PY
