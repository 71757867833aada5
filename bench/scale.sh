#!/usr/bin/env bash
# Scale: two daemons side by side, one with the small registry of a real
# device (10 workspaces, 10 roots), one with 10k workspaces and 100k roots
# written straight into its berth.db before it starts. Resolve latency is
# measured on both in alternating rounds (goal: p50 within 1.2× of the small
# case); RSS of both at rest (goals ≤ 30 MiB idle, ≤ 80 MiB at 100k roots);
# and the watch count after resolving 2,000 distinct directories (bounded).
#
#   cargo build --release --workspace --bins
#   bench/scale.sh              # ROUNDS=3 CALLS=10000
#   BEFORE_DAEMON=/tmp/old/berthd bench/scale.sh   # adds that berthd, big registry, to the rounds
set -euo pipefail
source "$(dirname "$0")/env.sh"
load=$berth_load
[ -x "$load" ] || { echo "missing $load: cargo build --release -p berth-bench --bins" >&2; exit 1; }
berth daemon stop >/dev/null

# Same directories for both: a project tree, 3 levels deep.
dirs=()
for d in $(seq 1 50); do
  sub=$proj/m$((d % 7))/n$d
  mkdir -p "$sub"
  dirs+=("$sub")
done

# small: 10 workspaces, 10 roots (+ shop's); big: 10k and 100k.
start() { # name workspaces roots [berthd]
  local data=$tmp/data-$1 sock=$tmp/run-$1/berthd.sock
  mkdir -p "$tmp/run-$1" && chmod 700 "$tmp/run-$1"
  cp -r "$BERTH_DATA_DIR" "$data"
  rm -f "$data"/berth.db-wal "$data"/berth.db-shm
  "$load" populate "$data/berth.db" --workspaces "$2" --roots "$3" >/dev/null
  BERTH_DAEMON=${4:-$bin/berthd} BERTH_DATA_DIR=$data BERTH_SOCKET=$sock berth daemon start >/dev/null
}
in_() { local n=$1; shift; BERTH_DATA_DIR=$tmp/data-$n BERTH_SOCKET=$tmp/run-$n/berthd.sock "$@"; }

machine
start small 10 10
start big 10000 100000
[ -n "${BEFORE_DAEMON:-}" ] && start before 10000 100000 "$BEFORE_DAEMON"
sleep 1
echo "RSS after start: small $(in_ small daemon_rss_kib) KiB, big $(in_ big daemon_rss_kib) KiB"
for r in $(seq 1 "${ROUNDS:-3}"); do
  echo "round $r small: $(in_ small "$load" latency --calls "${CALLS:-10000}" "${dirs[@]}")"
  echo "round $r big:   $(in_ big "$load" latency --calls "${CALLS:-10000}" "${dirs[@]}")"
  if [ -n "${BEFORE_DAEMON:-}" ]; then
    echo "round $r big, BEFORE_DAEMON: $(in_ before "$load" latency --calls "${CALLS:-10000}" "${dirs[@]}")"
  fi
done
sleep 2
echo "RSS at rest: small $(in_ small daemon_rss_kib) KiB, big $(in_ big daemon_rss_kib) KiB"

# Watches: resolve 2,000 distinct directories on the big daemon.
many=()
for d in $(seq 1 2000); do
  sub=$tmp/wide/x$((d % 40))/y$d
  mkdir -p "$sub"
  many+=("$sub")
done
in_ big "$load" latency --calls 4000 --warmup 0 "${many[@]}" >/dev/null
echo "big after 2,000 directories: RSS $(in_ big daemon_rss_kib) KiB; $(in_ big berth daemon status --json | tr -d '\n ')"
in_ small berth daemon stop >/dev/null
in_ big berth daemon stop >/dev/null
[ -n "${BEFORE_DAEMON:-}" ] && in_ before berth daemon stop >/dev/null
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
