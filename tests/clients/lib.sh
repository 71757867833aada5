# Shared by the scripts in this folder (sourced, not run): the tally of checks,
# a throwaway user with its own daemon, and the end of both. The sourcing
# script sets WORK (its temporary folder) first.

PASSED=0
FAILED=0
OWN_DAEMON=

ok() { echo "ok   $1"; PASSED=$((PASSED + 1)); }
fail() { echo "FAIL $1: $2"; FAILED=$((FAILED + 1)); }
die() { echo "error: $1" >&2; exit 1; }

# A throwaway user under $WORK: HOME, XDG_* and the data folder and socket a
# stripped server derives from HOME alone, so a client that passes neither
# BERTH_* nor XDG_* still finds this user's daemon through its record.
throwaway_user() {
    export HOME="$WORK/home"
    export XDG_CONFIG_HOME="$HOME/.config" XDG_DATA_HOME="$HOME/.local/share"
    export XDG_STATE_HOME="$HOME/.local/state" XDG_CACHE_HOME="$HOME/.cache"
    export XDG_RUNTIME_DIR="$WORK/run"
    export BERTH_DATA_DIR="$XDG_DATA_HOME/berth"
    export BERTH_SOCKET="$XDG_RUNTIME_DIR/berth/berthd.sock"
    unset BERTH_WORKSPACE BERTH_EXTRA_HOME BERTH_CWD BERTH_DAEMON BERTH_LOG
    export NO_COLOR=1
    mkdir -p "$HOME" "$XDG_RUNTIME_DIR"
    chmod 700 "$XDG_RUNTIME_DIR"
    OWN_DAEMON=1
}

# Stops the throwaway user's daemon and removes $WORK, or keeps it when $1 is
# 1. The daemon is stopped only once the throwaway user exists: before that,
# `berth daemon stop` would stop the user's own daemon.
end_throwaway() {
    [ -n "$OWN_DAEMON" ] && timeout 20 berth daemon stop >/dev/null 2>&1
    if [ "${1:-}" = 1 ]; then
        echo "work folder kept: $WORK"
    else
        rm -rf "$WORK"
    fi
}
