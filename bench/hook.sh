#!/usr/bin/env bash
# Whole-process time of `berth-hook session-start` fed a real Claude Code
# payload, against `git rev-parse --show-toplevel` in the same directory
# (goal: ≤ 1.0×, ADR 0010). Release binaries, a warm daemon, a hermetic
# HOME/data/socket under /tmp. Prints both medians and the ratio.
#
#   cargo build --release --workspace --bins
#   bench/hook.sh            # RUNS=1000 by default
set -euo pipefail
source "$(dirname "$0")/env.sh"
runs=${RUNS:-1000}

# env.sh approved code/shop for workspace "shop"; this bench runs at its top.
proj=$tmp/code/shop
cd "$proj"

# The Claude Code fixture, pointed at this project.
payload=$tmp/payload.json
sed -e "s|\"cwd\": \"[^\"]*\"|\"cwd\": \"$proj\"|" \
  "$root/hook-shim/tests/fixtures/claude-code-session-start.json" >"$payload"
out=$(berth-hook session-start <"$payload")
case $out in
  *'uses workspace \"shop\"'*) ;;
  *) echo "unexpected hook output: $out" >&2; exit 1 ;;
esac

# hyperfine 1.15 has no --input, so each command runs as `sh -c 'exec …'`
# with -N: all three pay the same dash start-up and exec, and the
# `exec true` baseline measures that share, subtracted below.
hyperfine -N --warmup 100 --runs "$runs" \
  --export-json "$tmp/result.json" \
  "sh -c 'exec berth-hook session-start < $payload'" \
  "sh -c 'exec git rev-parse --show-toplevel'" \
  "sh -c 'exec true'"

python3 - "$tmp/result.json" <<'PY'
import json, statistics, sys
r = json.load(open(sys.argv[1]))["results"]
hook, git, base = (statistics.median(x["times"]) * 1000 for x in r)
print(f"median berth-hook session-start: {hook:.3f} ms ({hook - base:.3f} ms without the sh baseline)")
print(f"median git rev-parse --show-toplevel: {git:.3f} ms ({git - base:.3f} ms without the sh baseline)")
print(f"median sh -c 'exec true' (baseline): {base:.3f} ms")
print(f"ratio: {hook / git:.2f}x as measured, {(hook - base) / (git - base):.2f}x without the baseline")
PY
