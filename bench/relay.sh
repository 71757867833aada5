#!/usr/bin/env bash
# The roots relay's cost per message against a direct pipe, interleaved in
# one run, and its peak memory over a million messages (bench/relay.py;
# docs/decisions/0051-a-roots-relay-for-wrapped-servers.md).
#
#   cargo build --release --workspace --bins
#   bench/relay.sh              # ROUNDS=20000 MESSAGES=1000000
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=bench/env.sh
source "$here/env.sh"
machine
berth daemon start >/dev/null
cd "$proj"
python3 "$here/relay.py" "$@"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
