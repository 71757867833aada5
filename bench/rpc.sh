#!/usr/bin/env bash
# RPC figures through berth-load (the one client connector, release build),
# every ratio against Ping measured in the same run:
#  1. latency: Ping vs Resolve interleaved on one reused connection, p50/p99
#     (goals: Resolve p50 ≤ 1.15× Ping p50, Resolve p99 ≤ 2× Ping p50);
#  2. throughput: 32 clients, one connection each, resolving random
#     directories, against the same clients sending Pings, alternated twice
#     (goal: Resolve ≥ 0.8× Ping);
#  3. daemon RSS at rest afterwards (goal ≤ 30 MiB idle).
#
#   cargo build --release --workspace --bins
#   bench/rpc.sh                # CALLS=20000 SECS=5 CLIENTS=32
set -euo pipefail
source "$(dirname "$0")/env.sh"
load=$berth_load
[ -x "$load" ] || { echo "missing $load: cargo build --release -p berth-bench --bins" >&2; exit 1; }

# 200 directories in 8 projects (half approved, half not), 1 to 5 levels deep.
dirs=()
for p in $(seq 1 8); do
  top=$tmp/code/p$p
  mkdir -p "$top"
  git -C "$top" init -q
  [ $((p % 2)) = 0 ] && (cd "$top" && berth workspace use "w$p" >/dev/null 2>&1)
  for d in $(seq 1 25); do
    sub=$top/a$((d % 5))/b$d/c/d
    sub=${sub%/*}
    [ $((d % 3)) = 0 ] && sub=${sub%/*}
    mkdir -p "$sub"
    dirs+=("$sub")
  done
done

machine
lat=$("$load" latency --calls "${CALLS:-20000}" "${dirs[@]}")
echo "latency:    $lat"
tp=()
for round in 1 2; do
  for rpc in resolve ping; do
    out=$("$load" throughput --rpc $rpc --clients "${CLIENTS:-32}" --secs "${SECS:-5}" "${dirs[@]}")
    echo "throughput: $out"
    tp+=("$out")
  done
done
python3 - "$lat" "${tp[@]}" <<'PY'
import json, sys
lat = json.loads(sys.argv[1])
tp = [json.loads(a) for a in sys.argv[2:]]
per = lambda rpc: sum(t["per_sec"] for t in tp if t["rpc"] == rpc) / 2
ping50 = lat["ping_p50_us"]
print(f"Resolve p50 / Ping p50: {lat['resolve_p50_us'] / ping50:.2f}x (goal <= 1.15)")
print(f"Resolve p99 / Ping p50: {lat['resolve_p99_us'] / ping50:.2f}x (goal <= 2)")
print(f"throughput Resolve / Ping: {per('resolve'):.0f} / {per('ping'):.0f} per s = "
      f"{per('resolve') / per('ping'):.2f}x (goal >= 0.8)")
PY
sleep 2
echo "daemon RSS at rest: $(daemon_rss_kib) KiB; $(berth daemon status --json | tr -d '\n ' )"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
