#!/usr/bin/env bash
# RPC figures through berth-load (the one client connector, release build):
#  1. latency: Ping vs Resolve interleaved on one reused connection, p50/p99
#     (goal: Resolve p50 ≤ 1.15× Ping, p99 ≤ 250 µs);
#  2. throughput: 32 clients, one connection each, resolving random
#     directories (goal ≥ 25k resolves/s on 2 cores);
#  3. daemon RSS at rest afterwards (goal ≤ 30 MiB idle).
#
#   cargo build --release --workspace --bins
#   bench/rpc.sh                # CALLS=20000 SECS=5 CLIENTS=32
set -euo pipefail
source "$(dirname "$0")/env.sh"
load=$root/target/release/berth-load
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
echo "latency:    $("$load" latency --calls "${CALLS:-20000}" "${dirs[@]}")"
echo "throughput: $("$load" throughput --clients "${CLIENTS:-32}" --secs "${SECS:-5}" "${dirs[@]}")"
sleep 2
echo "daemon RSS at rest: $(daemon_rss_kib) KiB; $(berth daemon status --json | tr -d '\n ' )"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
