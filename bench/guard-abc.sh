#!/usr/bin/env bash
# Before/after for the pre-tool hook (ADR 0052), in one run. Each directory of binaries given
# gets a daemon of its own (its own data folder and socket) over the same two projects; then,
# for each, callgrind's instruction count of one `berth-hook pre-tool` process against its warm
# daemon, the daemon's CPU time per call (perf's task clock on the daemon across RUNS calls),
# and the whole-process medians of all, interleaved with git in one race per payload. Every
# command runs under the same `env` prefix, git's too, so they pay its exec alike.
#
#   bench/guard-abc.sh /tmp/berth-before target/release
set -euo pipefail
dirs=("$@")
BIN=${dirs[0]} source "$(dirname "$0")/env.sh"
runs=${RUNS:-300}
load=${LOAD:-${dirs[-1]}/berth-load}
cd "$proj"
other=$tmp/code/alpha
mkdir -p "$other"
git -C "$other" init -q

write() {
  printf '{"session_id":"0b1c4e2a-5d6f-4a7b-8c9d-e0f1a2b3c4d5","transcript_path":"/t.jsonl","cwd":"%s","permission_mode":"default","hook_event_name":"PreToolUse","tool_name":"Write","tool_input":{"file_path":"%s","content":"fn main() {}\\n"}}' "$proj" "$1"
}
own=$tmp/pre-tool-own.json
cross=$tmp/pre-tool-cross.json
write "$proj/src/new.rs" >"$own"
write "$other/lib.rs" >"$cross"
machine

race=()
i=0
for d in "${dirs[@]}"; do
  i=$((i + 1))
  b=$tmp/bin$i
  mkdir -p "$b" "$tmp/run$i"
  chmod 700 "$tmp/run$i"
  cp "$d/berth" "$d/berthd" "$d/berth-hook" "$b/"
  e="env BERTH_DATA_DIR=$tmp/data$i BERTH_SOCKET=$tmp/run$i/berthd.sock"
  (cd "$top" && $e "$b/berth" workspace use shop >/dev/null)
  (cd "$other" && $e "$b/berth" workspace use alpha >/dev/null)
  for p in "$own" "$cross"; do
    # Warm: the first call of each fills the daemon's cache.
    $e "$b/berth-hook" pre-tool <"$p" >/dev/null
    $e "$b/berth-hook" pre-tool <"$p" >/dev/null
  done
  [ -z "$($e "$b/berth-hook" pre-tool <"$own")" ] || { echo "$d: objection to its own project" >&2; exit 1; }
  case $($e "$b/berth-hook" pre-tool <"$cross") in
    *'"permissionDecision":"ask"'*) ;;
    *) echo "$d: no objection to a write into alpha" >&2; exit 1 ;;
  esac
  pid=$($e "$b/berth" daemon status --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["pid"])')
  for p in "$own" "$cross"; do
    ir=$($e valgrind --tool=callgrind --callgrind-out-file=/dev/null "$b/berth-hook" pre-tool <"$p" 2>&1 >/dev/null | awk '/Collected/ {print $4}')
    ms=$(perf stat -x, -e task-clock -p "$pid" -- sh -c "for n in \$(seq $runs); do $e $b/berth-hook pre-tool <$p >/dev/null; done" 2>&1 >/dev/null |
      awk -F, -v n="$runs" '/task-clock/ {printf "%.3f", $1 / n}')
    echo "$d, $(basename "$p" .json): hook $ir instructions; daemon $ms ms CPU per call"
  done
  race+=("$e $b/berth-hook pre-tool")
done
for p in "$own" "$cross"; do
  echo "interleaved (berth-load race, $runs rounds, stdin $(basename "$p")): ${dirs[*]}"
  "$load" race --runs "$runs" --stdin "$p" "$e git rev-parse --show-toplevel" "${race[@]}"
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
