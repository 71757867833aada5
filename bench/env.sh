# Shared set-up for bench/*.sh (sourced, not run): release binaries, hyperfine,
# a hermetic HOME/data/socket under /tmp, and a git project a few levels deep
# approved for workspace "shop". Sets: root bin tmp proj payload.
#
# BIN (default target/release) picks the binaries under test. They are copied
# into the run's folder and run from there, as an install copies them: a file
# the linker wrote in small pieces sits in the page cache in small pieces, and
# starting it takes more page faults (about 20 more for `berth resolve`, 1.2x
# its whole-process time on this machine) than the same bytes copied.

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
built=${BIN:-$root/target/release}
# Absolute: the scripts run their commands from the project's folder.
built=$(cd "$built" 2>/dev/null && pwd) || { echo "BIN: no folder ${BIN:-$root/target/release}" >&2; exit 1; }
for b in berth berthd berth-hook; do
  [ -x "$built/$b" ] || {
    echo "missing $built/$b: cargo build --release --workspace --bins" >&2
    exit 1
  }
done
command -v hyperfine >/dev/null || apt-get install -y hyperfine >/dev/null

tmp=$(mktemp -d /tmp/berth-bench.XXXXXX)
bin=$tmp/bin
mkdir "$bin"
for b in berth berthd berth-hook berth-mcp; do
  [ -x "$built/$b" ] && cp "$built/$b" "$bin/"
done
# The baselines are copied the same way, from BIN's folder where it has them (BIN may be an
# older build without them; then the repository's own target folder).
for b in empty mcp-floor; do
  for from in "$built" "${CARGO_TARGET_DIR:-$root/target}/release"; do
    [ -x "$from/$b" ] && { cp "$from/$b" "$bin/"; break; }
  done
done
# The load generator and racer, found the same way.
berth_load=
for from in "$built" "${CARGO_TARGET_DIR:-$root/target}/release"; do
  [ -x "$from/berth-load" ] && { berth_load=$from/berth-load; break; }
done
cleanup() {
  for s in "$tmp"/run*/berthd.sock; do
    [ -e "$s" ] && BERTH_SOCKET=$s "$bin/berth" daemon stop >/dev/null 2>&1
  done
  rm -rf "$tmp"
}
trap cleanup EXIT

export HOME=$tmp/home BERTH_DATA_DIR=$tmp/data BERTH_SOCKET=$tmp/run/berthd.sock
export XDG_STATE_HOME=$tmp/state PATH=$bin:$PATH
unset BERTH_LOG BERTH_WORKSPACE BERTH_CWD BERTH_EXTRA_HOME BERTH_DAEMON
mkdir -p "$HOME" "$tmp/run"
chmod 700 "$tmp/run"

# A real repository, approved for a workspace, resolved from three levels down.
top=$tmp/code/shop
proj=$top/src/app/web
mkdir -p "$proj"
git -C "$top" init -q
(cd "$top" && berth workspace use shop >/dev/null)

# The Claude Code fixture, pointed at that directory.
payload=$tmp/payload.json
sed -e "s|\"cwd\": \"[^\"]*\"|\"cwd\": \"$proj\"|" \
  "$root/hook-shim/tests/fixtures/claude-code-session-start.json" >"$payload"

# The machine, for the record.
machine() {
  echo "date: $(date -u +%FT%TZ)"
  echo "nproc: $(nproc); cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
  echo "memory: $(free -h | awk '/^Mem:/ {print $2 " total, " $7 " available"}')"
  echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
}

# VmRSS of the daemon behind $BERTH_SOCKET, in KiB.
daemon_rss_kib() {
  local pid
  pid=$(berth daemon status --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["pid"])')
  awk '/^VmRSS:/ {print $2}' "/proc/$pid/status"
}
