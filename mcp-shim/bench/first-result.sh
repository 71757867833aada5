#!/usr/bin/env bash
# Spawn -> first tool result of berth-mcp with a warm daemon (goal <= 30 ms).
#
# Two measurements, both in a throwaway HOME/BERTH_DATA_DIR/BERTH_SOCKET:
#  1. rmcp's own client (mcp-shim/examples/first_result.rs) spawns berth-mcp,
#     does the initialize handshake and one device_context call, N times;
#  2. hyperfine (when installed) runs a whole bash client process doing the
#     same over a coprocess, so process exit and bash are included.
# Usage: mcp-shim/bench/first-result.sh [N]   (release build, from the repo root)
set -euo pipefail
N=${1:-200}
cd "$(dirname "$0")/../.."
cargo build --release -q -p berth-mcp -p berthd --bins
cargo build --release -q -p berth-mcp --example first_result
BIN=$PWD/target/release
TMP=$(mktemp -d /tmp/bbench.XXXX)
# Stop this run's daemon (its pid is in the lock file) and clean up.
trap 'kill "$(cat "$TMP/run/berthd.sock.lock" 2>/dev/null)" 2>/dev/null || true; rm -rf "$TMP"' EXIT
mkdir -p "$TMP"/{home,data,run,proj/.git}
chmod 700 "$TMP/run"
export HOME=$TMP/home BERTH_DATA_DIR=$TMP/data BERTH_SOCKET=$TMP/run/berthd.sock
export XDG_STATE_HOME=$TMP/state XDG_RUNTIME_DIR=$TMP/run BERTH_LOG=warn
export PATH=$BIN:$PATH
DIR=$TMP/proj
# Warm the daemon: the first sessions start it and fill its lookup cache.
"$BIN/examples/first_result" "$BIN/berth-mcp" "$DIR" 5 >/dev/null
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(uname -sr)"
"$BIN/examples/first_result" "$BIN/berth-mcp" "$DIR" "$N"

if command -v hyperfine >/dev/null; then
  cat >"$TMP/client.sh" <<'CLIENT'
#!/usr/bin/env bash
coproc S { exec berth-mcp --cwd "$1" 2>/dev/null; }
printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"0"}}}' >&"${S[1]}"
read -r _ <&"${S[0]}"
printf '%s\n' '{"jsonrpc":"2.0","method":"notifications/initialized"}' '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"device_context","arguments":{}}}' >&"${S[1]}"
read -r _ <&"${S[0]}"
CLIENT
  chmod +x "$TMP/client.sh"
  hyperfine -N --warmup 20 --runs "$N" "$TMP/client.sh $DIR" --export-json "$TMP/h.json" >/dev/null
  python3 - "$TMP/h.json" <<'PY' 2>/dev/null || jq '.results[0].median*1000' "$TMP/h.json"
import json, sys
r = json.load(open(sys.argv[1]))["results"][0]
print(f"hyperfine, whole bash client process ({len(r['times'])} runs): median {r['median']*1000:.2f} ms, mean {r['mean']*1000:.2f} ms ± {r['stddev']*1000:.2f} ms, min {r['min']*1000:.2f} ms")
PY
fi
