#!/usr/bin/env bash
# Whole-process time, side by side in one hyperfine run, in the same
# directory (a git project three levels below its top, approved for a
# workspace): `berth resolve --json`, `berth-hook session-start` fed the
# Claude Code payload, `git rev-parse --show-toplevel`, an empty Rust binary
# and the shell baseline. Goal (ADR 0010): berth ≤ 1.0× git, median ratio.
#
# hyperfine 1.15 has no --input, so every command runs through the same
# `sh -c 'exec … < payload'` wrapper (-N: no extra shell), and `sh -c 'exec
# true < payload'` measures the wrapper's own share.
#
#   cargo build --release --workspace --bins
#   bench/whole-process.sh              # RUNS=1000; the glibc clients of that build
#   .ci/platforms musl && BIN=target/release-musl bench/whole-process.sh   # the release build
#                                       # (berth and berth-hook on musl, ADR 0057)
#   BEFORE=/tmp/berth-before bench/whole-process.sh   # adds older binaries to the same run
set -euo pipefail
source "$(dirname "$0")/env.sh"
runs=${RUNS:-1000}
empty=$bin/empty
if [ -n "${BEFORE:-}" ]; then # copied too, like the binaries under test (env.sh)
  mkdir "$tmp/before"
  cp "$BEFORE/berth" "$BEFORE/berth-hook" "$tmp/before/"
  BEFORE=$tmp/before
fi
[ -x "$empty" ] || { echo "missing $empty: cargo build --release -p berth-bench --bins" >&2; exit 1; }

cd "$proj"
out=$(berth-hook session-start <"$payload")
case $out in
  *'uses workspace \"shop\"'*) ;;
  *) echo "unexpected hook output: $out" >&2; exit 1 ;;
esac
berth resolve --json | grep -q '"workspace": "shop"'

cmds=(
  "sh -c 'exec $bin/berth resolve --json < $payload'"
  "sh -c 'exec $bin/berth-hook session-start < $payload'"
  "sh -c 'exec git rev-parse --show-toplevel < $payload'"
  "sh -c 'exec $empty < $payload'"
  "sh -c 'exec true < $payload'"
)
if [ -n "${BEFORE:-}" ]; then
  cmds+=(
    "sh -c 'exec $BEFORE/berth resolve --json < $payload'"
    "sh -c 'exec $BEFORE/berth-hook session-start < $payload'"
  )
fi

machine
echo "commands run in $proj"
hyperfine -N --warmup 100 --runs "$runs" --export-json "$tmp/result.json" "${cmds[@]}" >"$tmp/hyperfine.txt" \
  || { cat "$tmp/hyperfine.txt"; exit 1; }
python3 - "$tmp/result.json" <<'PY'
import json, statistics, sys
r = json.load(open(sys.argv[1]))["results"]
med = [statistics.median(x["times"]) * 1000 for x in r]
git, base = med[2], med[4]
names = ["berth resolve --json", "berth-hook session-start", "git rev-parse --show-toplevel",
         "empty Rust binary", "sh -c true (baseline)", "before: berth resolve --json",
         "before: berth-hook session-start"]
print("| command | median | less the sh baseline | / git (median) | / git (less baseline) |")
print("| --- | --- | --- | --- | --- |")
for n, m in zip(names, med):
    print(f"| {n} | {m:.3f} ms | {m - base:.3f} ms | {m / git:.2f}× | {(m - base) / (git - base):.2f}× |")
PY

# Cross-check with a runner that interleaves the commands round-robin (no
# shell: stdin is the payload file for all), so drifting load hits all alike.
load=$berth_load
if [ -x "$load" ]; then
  echo "interleaved (berth-load race, ${runs} rounds; ratios over git):"
  race=("git rev-parse --show-toplevel" "$bin/berth resolve --json"
    "$bin/berth-hook session-start" "$bin/berth prompt" "$empty" "/usr/bin/true")
  [ -n "${BEFORE:-}" ] && race+=("$BEFORE/berth resolve --json" "$BEFORE/berth-hook session-start")
  "$load" race --runs "$runs" --stdin "$payload" "${race[@]}"
else
  echo "no berth-load beside BIN or in target/release: the interleaved race is skipped" >&2
fi
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
