#!/usr/bin/env bash
# MCP spawn -> first tool result: berth-mcp against a do-nothing MCP server
# built the same way (bench/src/bin/mcp-floor.rs), with the same client, the
# official Python MCP SDK (`mcp` from PyPI, in a venv under target/ that this
# script creates once), interleaved run by run. Warm daemon; the session's
# directory is the approved project three levels deep. Goal: berth-mcp
# ≤ 1.5× the floor (median).
#
#   cargo build --release --workspace --bins
#   bench/mcp-first.sh              # RUNS=100
set -euo pipefail
source "$(dirname "$0")/env.sh"
floor=$bin/mcp-floor
[ -x "$floor" ] || { echo "missing $floor: cargo build --release -p berth-bench --bins" >&2; exit 1; }
[ -x "$bin/berth-mcp" ] || { echo "missing $bin/berth-mcp: cargo build --release -p berth-mcp" >&2; exit 1; }
venv=$root/target/bench-venv
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import mcp' 2>/dev/null; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q mcp
fi

cd "$proj"
berth resolve >/dev/null # a warm daemon
machine
echo "client: python mcp $("$venv/bin/python" -c 'import importlib.metadata as m; print(m.version("mcp"))')"
BERTH_LOG=warn "$venv/bin/python" "$root/bench/mcp-first.py" "${RUNS:-100}" "$proj" \
  "berth-mcp=$bin/berth-mcp" "floor=$floor"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
