#!/usr/bin/env bash
# tests/platform/scenario.sh: one user-level scenario against a set of berth binaries, natively
# or under Wine, so the Windows build is tested by the same checks the Linux build passes today.
#
#   tests/platform/scenario.sh --native target/debug
#   tests/platform/scenario.sh --wine target/platforms/x86_64-pc-windows-gnu/debug
#
# Each check prints `ok - <what>` or `not ok - <what>: <why>`; the last line is
# `scenario: N passed, M failed`, and the exit status is 1 when anything failed. It asserts on
# the --json documents of docs/reference.md, not on prose.
#
# Hermetic: the data folder, the home, the projects and the socket are in a fresh temporary
# folder (kept when a check failed, or with SCENARIO_KEEP=1). Natively the socket is a path in
# it; under Wine a named pipe \\.\pipe\berth-test-<random>, and every path a program is given
# is its Windows spelling (Z: is /). Wine always sets USERPROFILE to the prefix's
# C:\users\<user> and drops HOME, so under Wine only the data folder and the socket are
# per-run; the projects are outside that home either way.
#
# Env: WINE        the wine loader (default: wine64 or wine on PATH, else /usr/lib/wine/wine64)
#      WINEPREFIX  as for wine itself; .ci/platforms passes its cached prefix
#      SCENARIO_TIMEOUT  seconds any one program may take (default 30, 60 under Wine)
#      SCENARIO_DEADLINE seconds the whole scenario may take (default 120, 600 under Wine); past
#                        it every program left fails at once, so a hang cannot eat CI's time
# Needs: bash, coreutils (timeout), python3 (JSON and tests/platform/mcp_drive.py; stdlib only).
set -uo pipefail   # no -e: a failed check is counted and the scenario goes on

here=$(cd "$(dirname "$0")" && pwd)
usage() { echo "usage: $0 --native DIR | --wine DIR   (DIR: where berth, berthd, berth-mcp, berth-hook are)" >&2; exit 2; }
[ $# -eq 2 ] || usage
case $1 in --native) mode=native exe= ;; --wine) mode=wine exe=.exe ;; *) usage ;; esac
bin=$(cd "$2" 2>/dev/null && pwd) || { echo "scenario: no folder $2" >&2; exit 2; }

pass=0 fail=0
ok() { pass=$((pass + 1)); echo "ok - $1"; }
nok() { fail=$((fail + 1)); echo "not ok - $1: $2"; }
# The summary is the last line, after the clean-up's own.
finish() { trap - EXIT; cleanup; echo "scenario: $pass passed, $fail failed"; [ "$fail" -eq 0 ]; exit; }
T= fg=
cleanup() { :; }

missing=()
for p in berth berthd berth-mcp berth-hook; do [ -f "$bin/$p$exe" ] || missing+=("$p$exe"); done
if [ ${#missing[@]} -gt 0 ]; then nok "the binaries are in $bin" "missing ${missing[*]}"; finish; fi
command -v python3 >/dev/null || { nok "python3 is installed" "the checks read JSON with it"; finish; }

if [ $mode = wine ]; then
  WINE=${WINE:-$(command -v wine64 || command -v wine || echo /usr/lib/wine/wine64)}
  [ -x "$WINE" ] || { nok "wine is installed" "no $WINE (set WINE)"; finish; }
  export WINEDEBUG=${WINEDEBUG:--all} WINEDLLOVERRIDES=${WINEDLLOVERRIDES:-"mscoree,mshtml="}
  # Set before HOME changes below: without WINEPREFIX wine would make a new prefix there.
  export WINEPREFIX=${WINEPREFIX:-$HOME/.wine}
  limit=${SCENARIO_TIMEOUT:-60} deadline=${SCENARIO_DEADLINE:-600}
  [ -f "$bin/bcryptprimitives.dll" ] ||
    echo "# note: no bcryptprimitives.dll beside the .exe files: Wine before 9 lacks ProcessPrng, which Rust's std imports (.ci/platforms puts a test-only stand-in there)"
else
  limit=${SCENARIO_TIMEOUT:-30} deadline=${SCENARIO_DEADLINE:-120}
fi
deadline=$((SECONDS + deadline))
# The seconds a program may take now: the limit, or what is left before the deadline (1 at least).
allowed() { local left=$((deadline - SECONDS)); [ $left -lt "$limit" ] && echo $((left > 1 ? left : 1)) || echo "$limit"; }

# ---- a fresh world ---------------------------------------------------------------------------
T=$(mktemp -d "${TMPDIR:-/tmp}/berth-scenario.XXXXXX") && T=$(cd "$T" && pwd -P) ||
  { nok "a temporary folder" "mktemp failed"; finish; }
out=$T/out home=$T/home data=$T/data
shop=$home/code/shop garden=$home/code/garden orchard=$home/code/orchard
mkdir -p "$out" "$shop/.git" "$shop/src/deep" "$garden/.git" "$orchard/.git"

# A path as the program under test is given it and spells it back.
wpath() { if [ $mode = wine ]; then local p=${1//\//\\}; echo "Z:$p"; else echo "$1"; fi; }
# Equal paths as the daemon may spell them: Windows's \\?\ prefix, trailing separators and
# (under Wine, where the drive letter makes it Windows's rule) case aside.
same_path() {
  local a=${1#\\\\?\\} b=${2#\\\\?\\}
  a=${a%[/\\]} b=${b%[/\\]}
  if [ $mode = wine ]; then a=${a,,} b=${b,,}; fi
  [ -n "$a" ] && [ "$a" = "$b" ]
}

for v in $(compgen -e); do
  case $v in BERTH_* | XDG_* | CLAUDE_* | COPILOT_* | CODEX_*) unset "$v" ;; esac
done
export HOME=$home USERPROFILE=$(wpath "$home") NO_COLOR=1
export BERTH_DATA_DIR=$(wpath "$data")
if [ $mode = wine ]; then
  export BERTH_SOCKET="\\\\.\\pipe\\berth-test-$$-$RANDOM$RANDOM"
else
  mkdir -m 700 "$T/run" && export BERTH_SOCKET=$T/run/berthd.sock
fi
echo "# $mode binaries in $bin; world in $T; socket $BERTH_SOCKET"

# run PROGRAM ARGS...: one of the binaries, natively or under Wine, within the time limit.
run() {
  local p=$bin/$1$exe t; shift
  [ $SECONDS -lt $deadline ] || { echo "the scenario's deadline passed" >&2; return 124; }
  t=$(allowed)
  if [ $mode = wine ]; then timeout "$t" "$WINE" "$p" "$@"; else timeout "$t" "$p" "$@"; fi
}
# cli NAME DIR ARGS...: `berth ARGS` in DIR; stdout in $out/NAME.out (also $f), stderr beside it.
cli() {
  local name=$1 dir=$2; shift 2
  f=$out/$name.out
  (cd "$dir" && run berth "$@") >"$f" 2>"$out/$name.err" </dev/null
  rc=$?
  why="exit $rc: $(head -c 400 "$out/$name.err" | tr '\n' ' ')"
}
# jv FILE EXPR: a Python expression over the JSON document `d` in FILE, printed bare
# (strings as they are, null, true/false); `<no JSON: ...>` when there is no document.
jv() {
  python3 - "$1" "$2" <<'EOF'
import json, sys
try:
    d = json.load(open(sys.argv[1], encoding="utf-8"))
    v = eval(sys.argv[2], {"d": d})
except Exception as e:
    v = f"<no JSON: {type(e).__name__}: {e}>"
print(v if isinstance(v, str) else json.dumps(v))
EOF
}

cleanup() {
  deadline=$((SECONDS + limit))   # the clean-up's own time, past the scenario's deadline
  run berth daemon stop --force >/dev/null 2>&1 </dev/null
  [ -n "$fg" ] && kill "$fg" 2>/dev/null
  if [ "$fail" -gt 0 ] || [ "${SCENARIO_KEEP:-0}" = 1 ]; then
    echo "# kept $T (daemon log in $data/log/)"
  else
    rm -rf "$T"
  fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---- the CLI, with a daemon the first client starts -----------------------------------------
cli status0 "$T" daemon status --json
if [ $rc = 0 ] && [ "$(jv "$f" 'd["running"]')" = false ]; then ok "daemon status before any client: not running"
else nok "daemon status before any client: not running" "$why $(head -c 300 "$f")"; fi

cli resolve0 "$shop" resolve --json
if [ $rc = 0 ] && [ "$(jv "$f" '[d["workspace"], d["reason"], d["proposal"], d["project_file"]]')" = '["default", "active", null, null]' ] &&
  same_path "$(jv "$f" 'd["project"]')" "$(wpath "$shop")"; then
  ok "resolve in a plain git project (the first client starts the daemon): default, reason active, the folder is the project"
else nok "resolve in a plain git project: default, reason active, the folder is the project" "$why $(head -c 400 "$f")"; fi

cli status1 "$T" daemon status --json
if [ $rc = 0 ] && [ "$(jv "$f" 'd["running"]')" = true ] && same_path "$(jv "$f" 'd["data_dir"]')" "$(wpath "$data")"; then
  ok "the daemon the first client started answers daemon status, for this data folder"
else nok "the daemon the first client started answers daemon status, for this data folder" "$why $(head -c 400 "$f")"; fi

cli use "$shop" workspace use shop --json
if [ $rc = 0 ] && [ "$(jv "$f" '[d["workspace"], d["created"], d["root_added"]]')" = '["shop", true, true]' ] &&
  same_path "$(jv "$f" 'd["project_file"]')" "$(wpath "$shop/.berth/workspace.json")"; then
  ok "workspace use shop: creates shop and approves the project folder"
else nok "workspace use shop: creates shop and approves the project folder" "$why $(head -c 400 "$f")"; fi
if [ "$(jv "$shop/.berth/workspace.json" 'd["workspace"]')" = shop ]; then ok "workspace use shop: writes .berth/workspace.json naming shop"
else nok "workspace use shop: writes .berth/workspace.json naming shop" "$(head -c 200 "$shop/.berth/workspace.json" 2>&1)"; fi

cli resolve1 "$shop" resolve --json
if [ $rc = 0 ] && [ "$(jv "$f" '[d["workspace"], d["reason"]]')" = '["shop", "project-file"]' ] &&
  same_path "$(jv "$f" 'd["project_file"]')" "$(wpath "$shop/.berth/workspace.json")"; then
  ok "resolve in the project: shop, reason project-file"
else nok "resolve in the project: shop, reason project-file" "$why $(head -c 400 "$f")"; fi

cli resolve2 "$shop/src/deep" resolve --json
if [ $rc = 0 ] && [ "$(jv "$f" 'd["workspace"]')" = shop ] && same_path "$(jv "$f" 'd["project"]')" "$(wpath "$shop")"; then
  ok "resolve two folders down in the project: shop, the same project"
else nok "resolve two folders down in the project: shop, the same project" "$why $(head -c 400 "$f")"; fi

cli explain "$shop" explain
shown=$(wpath "$shop")
if [ $mode = wine ]; then icase=-i; else icase=; fi
if [ $rc = 0 ] && grep -q $icase -F -- "$shown" "$f"; then ok "explain: exit 0 and names the project folder"
else nok "explain: exit 0 and names the project folder" "$why $(head -c 300 "$f")"; fi
cli explain_json "$shop" explain --json
if [ $rc = 0 ] && [ "$(jv "$f" '[d["workspace"], len(d["steps"]) > 0, bool(d["decided"])]')" = '["shop", true, true]' ]; then
  ok "explain --json: shop, with the walk's steps and the rule that decided"
else nok "explain --json: shop, with the walk's steps and the rule that decided" "$why $(head -c 400 "$f")"; fi

cli wslist "$T" workspace list --json
if [ $rc = 0 ] && [ "$(jv "$f" '[d["active"], sorted(w["name"] for w in d["workspaces"])]')" = '["default", ["default", "shop"]]' ]; then
  ok "workspace list: default (active) and shop"
else nok "workspace list: default (active) and shop" "$why $(head -c 400 "$f")"; fi

keep='next(s for s in d["settings"] if s["key"] == "scratch.keep_hours")'
cli settings "$T" setting list --json
if [ $rc = 0 ] && [ "$(jv "$f" "[$keep[\"value\"], $keep[\"default\"]]")" = '[null, "24"]' ]; then
  ok "setting list: scratch.keep_hours is unset, default 24"
else nok "setting list: scratch.keep_hours is unset, default 24" "$why $(head -c 400 "$f")"; fi
cli set "$T" setting set scratch.keep_hours 12 --json
if [ $rc = 0 ] && [ "$(jv "$f" '[d["key"], d["value"]]')" = '["scratch.keep_hours", "12"]' ]; then ok "setting set scratch.keep_hours 12"
else nok "setting set scratch.keep_hours 12" "$why $(head -c 400 "$f")"; fi
cli get "$T" setting get scratch.keep_hours --json
if [ $rc = 0 ] && [ "$(jv "$f" '[d["value"], d["default"]]')" = '["12", "24"]' ]; then ok "setting get scratch.keep_hours reads back 12"
else nok "setting get scratch.keep_hours reads back 12" "$why $(head -c 400 "$f")"; fi

cli stop0 "$T" daemon stop --json
if [ $rc = 0 ] && [ "$(jv "$f" 'd["stopped"]')" = true ]; then ok "daemon stop"
else nok "daemon stop" "$why $(head -c 400 "$f")"; fi
cli status2 "$T" daemon status --json
if [ $rc = 0 ] && [ "$(jv "$f" '[d["running"], d["pid"]]')" = '[false, null]' ]; then ok "daemon status after the stop: not running"
else nok "daemon status after the stop: not running" "$why $(head -c 400 "$f")"; fi

# ---- berthd --foreground, started by hand ----------------------------------------------------
fgcmd=("$bin/berthd$exe" --foreground)
[ $mode = wine ] && fgcmd=("$WINE" "${fgcmd[@]}")
(cd "$T" && exec "${fgcmd[@]}") >"$out/berthd-foreground.log" 2>&1 </dev/null &
fg=$!
up=0 t0=$SECONDS
while [ $((SECONDS - t0)) -lt "$limit" ]; do   # pacing: poll until it answers, bounded by the limit
  cli status3 "$T" daemon status --json
  [ $rc = 0 ] && [ "$(jv "$f" 'd["running"]')" = true ] && { up=1; break; }
  kill -0 "$fg" 2>/dev/null || break
  sleep 0.2
done
if [ $up = 1 ]; then ok "berthd --foreground answers daemon status (after $((SECONDS - t0)) s)"
else nok "berthd --foreground answers daemon status" "not within $limit s: $(tail -c 400 "$out/berthd-foreground.log" | tr '\n' ' ')"; fi

cli resolve3 "$shop" resolve --json
if [ $rc = 0 ] && [ "$(jv "$f" '[d["workspace"], d["reason"]]')" = '["shop", "project-file"]' ]; then
  ok "resolve after the restart: still shop (the registry outlived the daemon)"
else nok "resolve after the restart: still shop" "$why $(head -c 400 "$f")"; fi

# ---- berth-mcp over stdio ---------------------------------------------------------------------
# mcp LABEL MODE DIR ARGS...: tests/platform/mcp_drive.py MODE against berth-mcp --cwd DIR; its
# ok/not ok lines are this scenario's.
mcp() {
  local label=$1 how=$2 dir=$3 line; shift 3
  local cmd=("$bin/berth-mcp$exe" --cwd "$(wpath "$dir")")
  [ $mode = wine ] && cmd=("$WINE" "${cmd[@]}")
  local before=$((pass + fail))
  while IFS= read -r line; do
    case $line in
      "ok - "*) pass=$((pass + 1)) ;;
      "not ok - "*) fail=$((fail + 1)) ;;
    esac
    echo "$line"
  done < <(cd "$dir" && timeout "$(allowed)" python3 "$here/mcp_drive.py" "$how" --label "$label" --project "$(wpath "$dir")" \
    --timeout "$limit" --log "$out/$label.log" "$@" -- "${cmd[@]}" </dev/null 2>&1)
  [ $((pass + fail)) -gt "$before" ] || nok "$label: mcp_drive.py ran" "it printed no check"
}
mcp mcp-shop approved "$shop" --workspace shop
mcp mcp-garden unassigned "$garden" --use garden

note=$data/workspaces/garden/notes/a.md
if [ "$(python3 -B -c 'import sys; sys.path.insert(0, sys.argv[1]); import mcp_drive
print(open(sys.argv[2], encoding="utf-8", newline="").read() == mcp_drive.TEXT)' "$here" "$note" 2>&1)" = True ]; then
  ok "the note is in garden's managed home (<data>/workspaces/garden/notes/a.md), byte for byte"
else nok "the note is in garden's managed home (<data>/workspaces/garden/notes/a.md)" "$(ls -R "$data/workspaces" 2>&1 | head -c 300 | tr '\n' ' ')"; fi
cli resolve4 "$garden" resolve --json
if [ $rc = 0 ] && [ "$(jv "$f" '[d["workspace"], d["reason"]]')" = '["garden", "project-file"]' ]; then
  ok "resolve in the second project: garden, as the session's use_workspace approved it"
else nok "resolve in the second project: garden" "$why $(head -c 400 "$f")"; fi

# ---- berth-hook with Copilot CLI payloads ------------------------------------------------------
# The shapes of hook-shim/tests/fixtures/copilot-cli-*.json: camelCase, a numeric timestamp.
# hook NAME EVENT DIR PAYLOAD_FIELDS_JSON: berth-hook EVENT with that payload and cwd DIR.
hook() {
  local name=$1 event=$2 dir=$3 extra=$4
  f=$out/$name.out
  python3 -c 'import json, sys; d = json.loads(sys.argv[3]); d.update(sessionId=sys.argv[1], cwd=sys.argv[2]); print(json.dumps(d))' \
    "copilot-$name-$$" "$(wpath "$dir")" "$extra" >"$out/$name.in"
  (cd "$T" && run berth-hook "$event") <"$out/$name.in" >"$f" 2>"$out/$name.err"
  rc=$?
  why="exit $rc: $(head -c 300 "$out/$name.err" | tr '\n' ' ')"
}
only_context='sorted(d) == ["additionalContext"] and isinstance(d["additionalContext"], str)'
hook start_shop session-start "$shop" '{"timestamp": 1774281852263, "source": "new", "initialPrompt": "fix the failing cart test"}'
if [ $rc = 0 ] && [ "$(jv "$f" "$only_context and '\"shop\"' in d['additionalContext']")" = true ]; then
  ok "berth-hook session-start (Copilot CLI, approved project): exit 0, {\"additionalContext\"} naming shop"
else nok "berth-hook session-start (Copilot CLI, approved project): exit 0, {\"additionalContext\"} naming shop" "$why $(head -c 300 "$f")"; fi
hook start_orchard session-start "$orchard" '{"timestamp": 1774281852263, "source": "new"}'
if [ $rc = 0 ] && [ "$(jv "$f" "$only_context and 'use_workspace' in d['additionalContext']")" = true ]; then
  ok "berth-hook session-start (Copilot CLI, a project nothing assigns): exit 0, the ask-once notice"
else nok "berth-hook session-start (Copilot CLI, a project nothing assigns): exit 0, the ask-once notice" "$why $(head -c 300 "$f")"; fi
hook stop_shop stop "$shop" '{"timestamp": 1774281913507, "transcriptPath": "/home/ada/.copilot/session-state/s/events.jsonl", "stopReason": "end_turn"}'
if [ $rc = 0 ] && [ ! -s "$f" ]; then ok "berth-hook stop (Copilot CLI): exit 0, nothing on stdout"
else nok "berth-hook stop (Copilot CLI): exit 0, nothing on stdout" "$why stdout: $(head -c 200 "$f")"; fi

# ---- a Store app's folder (Windows only) ------------------------------------------------------
# Claude Desktop from the Microsoft Store starts its servers in C:\Windows\System32: no project
# there, and its session is never asked to choose one.
if [ $mode = wine ]; then
  sys32=$WINEPREFIX/drive_c/windows/system32
  f=$out/sys32.out
  (cd "$sys32" && run berth resolve --json) >"$f" 2>"$out/sys32.err" </dev/null
  rc=$? why="exit $rc: $(head -c 300 "$out/sys32.err" | tr '\n' ' ')"
  if [ $rc = 0 ] && [ "$(jv "$f" '[d["project"], d["proposal"], d["project_file"]]')" = '[null, null, null]' ]; then
    ok "resolve in C:\\Windows\\System32: no project, no proposal"
  else nok "resolve in C:\\Windows\\System32: no project, no proposal" "$why $(head -c 300 "$f")"; fi
  f=$out/sys32-hook.out
  python3 -c 'import json; print(json.dumps({"sessionId": "store-app", "cwd": "C:\\Windows\\System32", "timestamp": 1774281852263, "source": "new"}))' >"$out/sys32-hook.in"
  (cd "$T" && run berth-hook session-start) <"$out/sys32-hook.in" >"$f" 2>"$out/sys32-hook.err"
  rc=$? why="exit $rc: $(head -c 300 "$out/sys32-hook.err" | tr '\n' ' ')"
  if [ $rc = 0 ] && ! grep -q use_workspace "$f"; then
    ok "berth-hook session-start in C:\\Windows\\System32: exit 0, nobody is asked"
  else nok "berth-hook session-start in C:\\Windows\\System32: exit 0, nobody is asked" "$why $(head -c 300 "$f")"; fi
fi

# ---- the end ----------------------------------------------------------------------------------
cli stop1 "$T" daemon stop --json
if [ $rc = 0 ] && [ "$(jv "$f" 'd["stopped"]')" = true ]; then ok "daemon stop (the foreground daemon)"
else nok "daemon stop (the foreground daemon)" "$why $(head -c 400 "$f")"; fi
t0=$SECONDS
while kill -0 "$fg" 2>/dev/null && [ $((SECONDS - t0)) -lt "$limit" ]; do sleep 0.2; done
if kill -0 "$fg" 2>/dev/null; then nok "berthd --foreground exits after daemon stop" "still running after $limit s"
else
  wait "$fg"; st=$?; fg=
  if [ $st = 0 ]; then ok "berthd --foreground exits 0 after daemon stop"
  else nok "berthd --foreground exits 0 after daemon stop" "exit $st: $(tail -c 300 "$out/berthd-foreground.log" | tr '\n' ' ')"; fi
fi
finish
