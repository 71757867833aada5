#!/usr/bin/env bash
# Whole-process time of `berth-hook pre-tool` fed a real Claude Code PreToolUse payload (a
# Write into the session's own project, judged by the daemon: the common case), against
# `git rev-parse --show-toplevel` in the same directory (goal: ≤ 1.0×, ADR 0048). Release
# binaries, a warm daemon, a hermetic HOME/data/socket under /tmp. Prints both medians and
# the ratio.
#
#   cargo build --release --workspace --bins
#   bench/guard.sh           # RUNS=1000 by default; the glibc clients of that build
#   .ci/platforms musl && BIN=target/release-musl bench/guard.sh   # the release build (ADR 0057)
set -euo pipefail
source "$(dirname "$0")/env.sh"
runs=${RUNS:-1000}

# env.sh approved code/shop for workspace "shop"; another workspace owns code/alpha.
cd "$proj"
other=$tmp/code/alpha
mkdir -p "$other"
git -C "$other" init -q
(cd "$other" && berth workspace use alpha >/dev/null)

write() {
  printf '{"session_id":"0b1c4e2a-5d6f-4a7b-8c9d-e0f1a2b3c4d5","transcript_path":"/t.jsonl","cwd":"%s","permission_mode":"default","hook_event_name":"PreToolUse","tool_name":"Write","tool_input":{"file_path":"%s","content":"fn main() {}\\n"}}' "$proj" "$1"
}
own=$tmp/pre-tool-own.json
cross=$tmp/pre-tool-cross.json
write "$proj/src/new.rs" >"$own"
write "$other/lib.rs" >"$cross"
out=$(berth-hook pre-tool <"$own")
[ -z "$out" ] || { echo "unexpected objection: $out" >&2; exit 1; }
out=$(berth-hook pre-tool <"$cross")
case $out in
  *'"permissionDecision":"ask"'*) ;;
  *) echo "no objection to a write into alpha: $out" >&2; exit 1 ;;
esac
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"

# hyperfine 1.15 has no --input, so each command runs as `sh -c 'exec …'` with -N: all pay
# the same dash start-up and exec, and the `exec true` baseline measures that share.
hyperfine -N --warmup 100 --runs "$runs" \
  --export-json "$tmp/result.json" \
  "sh -c 'exec berth-hook pre-tool < $own'" \
  "sh -c 'exec git rev-parse --show-toplevel'" \
  "sh -c 'exec berth-hook pre-tool < $cross'" \
  "sh -c 'exec true'"

python3 - "$tmp/result.json" <<'PY'
import json, statistics, sys
r = json.load(open(sys.argv[1]))["results"]
own, git, cross, base = (statistics.median(x["times"]) * 1000 for x in r)
print(f"median berth-hook pre-tool, own project: {own:.3f} ms ({own - base:.3f} ms without the sh baseline)")
print(f"median berth-hook pre-tool, another workspace (ask): {cross:.3f} ms ({cross - base:.3f} ms without)")
print(f"median git rev-parse --show-toplevel: {git:.3f} ms ({git - base:.3f} ms without the sh baseline)")
print(f"median sh -c 'exec true' (baseline): {base:.3f} ms")
print(f"ratio, own project: {own / git:.2f}x as measured, {(own - base) / (git - base):.2f}x without the baseline")
print(f"ratio, another workspace: {cross / git:.2f}x as measured, {(cross - base) / (git - base):.2f}x without the baseline")
PY
# Interleaved round-robin (no shell; stdin the payload file for all), so drifting load hits
# every command alike: one race per payload.
load=$berth_load
if [ -x "$load" ]; then
  for p in "$own" "$cross"; do
    echo "interleaved (berth-load race, ${runs} rounds, stdin $(basename "$p"); ratios over git):"
    "$load" race --runs "$runs" --stdin "$p" \
      "git rev-parse --show-toplevel" "$bin/berth-hook pre-tool" "/usr/bin/true"
  done
else
  echo "no berth-load beside BIN or in target/release: the interleaved race is skipped" >&2
fi
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
