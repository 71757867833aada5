#!/usr/bin/env bash
# berth against its peers, each figure a ratio over berth measured in the same
# interleaved run, with the load average beside it:
#  - warm: watchman `watch-project` (a per-user daemon with a thin client),
#    `direnv export json` with its environment already loaded, `mise current`,
#    each against `berth resolve --json` in the same project (berth-load race);
#  - MCP: basic-memory's MCP server against berth-mcp, spawn -> first tool
#    result, with the official Python SDK as the client (bench/mcp-first.py);
#  - cold: no daemon -> first answer, berth against watchman, alternated.
#
# It installs what is missing: watchman, direnv and hyperfine from Debian's
# packages, mise from npm (@jdxcode/mise) and basic-memory from PyPI into a
# venv (it needs Python >= 3.12), both under target/bench-tools.
#
#   cargo build --release --workspace --bins
#   bench/peers.sh              # RUNS=300 MCP_RUNS=5 COLD_RUNS=20
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
tools=$here/../target/bench-tools
mkdir -p "$tools"
for pkg in watchman direnv hyperfine; do
  command -v $pkg >/dev/null || apt-get install -y $pkg >/dev/null
done
mise=$tools/mise/node_modules/.bin/mise
[ -x "$mise" ] || npm install --silent --prefix "$tools/mise" @jdxcode/mise >/dev/null
bm=$tools/bm/bin/basic-memory
if [ ! -x "$bm" ]; then
  py=
  for p in python3.13 python3.12 "$HOME"/.pyenv/versions/3.1[2-9]*/bin/python3 python3; do
    if command -v "$p" >/dev/null && "$p" -c 'import sys; sys.exit(sys.version_info < (3, 12))' 2>/dev/null; then
      py=$p
      break
    fi
  done
  [ -n "$py" ] || { echo "basic-memory needs Python >= 3.12; none found" >&2; exit 1; }
  "$py" -m venv "$tools/bm"
  "$tools/bm/bin/pip" install -q basic-memory
fi
source "$here/env.sh"
load=$berth_load
[ -x "$load" ] || { echo "missing $load: cargo build --release -p berth-bench --bins" >&2; exit 1; }
venv=$root/target/bench-venv
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import mcp' 2>/dev/null; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q mcp
fi
loadavg() { cut -d' ' -f1-3 /proc/loadavg; }

# Each peer's own state under this run's folder, never the user's.
export XDG_CONFIG_HOME=$tmp/config XDG_DATA_HOME=$tmp/xdg-data XDG_CACHE_HOME=$tmp/cache
export MISE_DATA_DIR=$tmp/mise MISE_CONFIG_DIR=$tmp/mise-config MISE_CACHE_DIR=$tmp/mise-cache
wm=(watchman --sockname="$tmp/watchman.sock" --statefile="$tmp/watchman.state"
  --logfile="$tmp/watchman.log" --pidfile="$tmp/watchman.pid")
cleanup_peers() { "${wm[@]}" shutdown-server >/dev/null 2>&1 || true; cleanup; }
trap cleanup_peers EXIT

cd "$proj"
echo 'export BENCH=1' >.envrc
direnv allow . >/dev/null
eval "$(direnv export bash 2>/dev/null)" # the environment loaded, as in a shell
berth resolve >/dev/null
"${wm[@]}" watch-project "$proj" >/dev/null
machine
echo "versions: $(watchman --version) watchman, $(direnv version) direnv, mise $("$mise" --version | cut -d' ' -f1), $("$bm" --version 2>/dev/null | tail -1)"

echo "== warm, interleaved (over_first = peer / berth), load before: $(loadavg)"
"$load" race --runs "${RUNS:-300}" \
  "$bin/berth resolve --json" \
  "watchman --sockname=$tmp/watchman.sock watch-project $proj" \
  "direnv export json" \
  "$mise current"
echo "load after: $(loadavg)"

echo "== MCP spawn -> first tool result (ratio over berth-mcp), load before: $(loadavg)"
BERTH_LOG=warn "$venv/bin/python" "$here/mcp-first.py" "${MCP_RUNS:-5}" "$proj" \
  "basic-memory:list_memory_projects=$bm mcp" "berth-mcp=$bin/berth-mcp"
echo "load after: $(loadavg)"

echo "== cold: no daemon -> first answer, alternated, load before: $(loadavg)"
python3 - "${COLD_RUNS:-20}" "$bin/berth" "$proj" "${wm[@]}" <<'PY'
import statistics, subprocess, sys, time
runs, berth, proj, wm = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4:]
quiet = dict(stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
def timed(argv):
    t = time.perf_counter()
    subprocess.run(argv, check=True, **quiet)
    return time.perf_counter() - t
b, w = [], []
for _ in range(runs):
    subprocess.run([berth, "daemon", "stop"], **quiet)
    b.append(timed([berth, "resolve", "--json"]))
    subprocess.run(wm + ["shutdown-server"], **quiet)
    time.sleep(0.05)  # its socket and pid file go
    w.append(timed(wm + ["watch-project", proj]))
mb, mw = statistics.median(b), statistics.median(w)
print(f"berth cold: median {mb*1000:.1f} ms; watchman cold: median {mw*1000:.1f} ms; "
      f"watchman / berth {mw/mb:.2f}x ({runs} runs each)")
PY
echo "load after: $(loadavg)"
