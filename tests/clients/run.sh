#!/usr/bin/env bash
# Real-client conformance: registers berth with the real clients (pinned
# versions, installed with npm into a temporary prefix), checks that each
# lists berth as connected, and runs one agent turn per client against a fake
# model API on 127.0.0.1 (fake_model.py). Each turn checks that session-start
# ran, that the ask-once notice reached the model, and that Stop ran.
#
#   tests/clients/run.sh
#
# Everything happens in a throwaway HOME with its own data, state and runtime
# folders; the user's own files and daemon are never touched. Needs the npm
# registry, so it is not part of .ci/run. Prints one line per check and
# `N passed, N failed`; exits 1 on any failure. docs/clients.md says what
# each check means and what it found.
#
# Environment:
#   BERTH_CLIENTS_PREFIX  npm prefix to install the clients into and keep
#                         (default: a temporary one, removed at the end)
#   BERTH_CLIENTS_TIMEOUT seconds each client command may take (default 120)
#   BERTH_CLIENTS_KEEP=1  keep the work folder (HOME, logs, model requests)

set -uo pipefail

# The versions docs/clients.md records results for.
INSPECTOR_VERSION=0.15.0
CLAUDE_CODE_VERSION=2.1.197
CODEX_VERSION=0.171.0
COPILOT_VERSION=1.0.102

# A phrase of the ask-once notice (daemon/core/src/notice.rs).
NOTICE="Ask the user once which workspace this project should use"
PROMPT="What is this device's berth context?"
LIMIT=${BERTH_CLIENTS_TIMEOUT:-120}

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
FAKE_MODEL="$ROOT/tests/clients/fake_model.py"
WORK=$(mktemp -d /tmp/berth-clients.XXXXXX)
source "$ROOT/tests/clients/lib.sh"
MODEL_PID=
CHILD=

cleanup() {
    [ -n "$CHILD" ] && kill -KILL -- "-$CHILD" 2>/dev/null
    [ -n "$MODEL_PID" ] && kill "$MODEL_PID" 2>/dev/null
    end_throwaway "${BERTH_CLIENTS_KEEP:-}"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Runs a command in its own process group, bounded by LIMIT seconds, with
# stdout and stderr in $1.out and $1.err; whatever it leaves running in its
# group is killed afterwards, or by cleanup when the script is interrupted
# (`wait` returns on a signal, a foreground child would not).
bounded() {
    local out=$1
    shift
    setsid timeout -k 5 "$LIMIT" "$@" >"$out.out" 2>"$out.err" </dev/null &
    CHILD=$!
    wait "$CHILD"
    local rc=$?
    kill -KILL -- "-$CHILD" 2>/dev/null
    CHILD=
    return "$rc"
}

# The fake model API for one turn, recording requests in $1.
start_model() {
    mkdir -p "$1"
    python3 "$FAKE_MODEL" serve "$1" "$1.port" &
    MODEL_PID=$!
    for _ in $(seq 100); do
        [ -s "$1.port" ] && break
        sleep 0.05
    done
    [ -s "$1.port" ] || die "the fake model API did not start"
    MODEL_URL="http://127.0.0.1:$(cat "$1.port")"
}

stop_model() {
    kill "$MODEL_PID" 2>/dev/null
    wait "$MODEL_PID" 2>/dev/null
    MODEL_PID=
}

# The hook log lines written since line $2, for client $1.
hook_lines() {
    tail -n "+$(($2 + 1))" "$HOOK_LOG" 2>/dev/null | grep -F "client=\"$1\""
}

hook_log_length() {
    if [ -f "$HOOK_LOG" ]; then wc -l <"$HOOK_LOG"; else echo 0; fi
}

# Checks one turn: $1 label, $2 client name in the hook log, $3 hook log
# length before the turn, $4 the turn's files, $5 the command's status, $6
# what the notice check demands: `result` (in the device_context result),
# `seen` (anywhere in what the model got) or `once` (in the session-start
# context, and not again in the device_context result).
check_turn() {
    local label=$1 client=$2 before=$3 dir=$4 rc=$5 want=$6
    if [ "$rc" -ne 0 ]; then
        fail "$label: the turn ends" "exit $rc; $(tail -c 300 "$dir/turn.err" | tr '\n' ' ')"
    fi
    if hook_lines "$client" "$before" | grep -q 'event="session-start"'; then
        ok "$label: session-start ran"
    else
        fail "$label: session-start ran" "no session-start line in $HOOK_LOG"
    fi
    local saw first result
    saw=$(python3 "$FAKE_MODEL" saw "$dir/model" "$NOTICE")
    first=$(head -1 <<<"$saw")
    result=$(sed -n 2p <<<"$saw")
    case "$want:$first" in
        result:result*)
            ok "$label: the device_context result the model got holds the notice" ;;
        result:called*)
            fail "$label: the device_context result the model got holds the notice" "it got: $result" ;;
        seen:result* | seen:*elsewhere)
            ok "$label: the notice reached the model (${first/called elsewhere/session-start context})" ;;
        seen:called*)
            fail "$label: the notice reached the model" "neither the session-start context nor the result held it; the result: $result" ;;
        "once:called elsewhere")
            ok "$label: the notice reached the model once (session-start context), the device_context result holds none" ;;
        once:result*)
            fail "$label: the notice reached the model once" "the device_context result asked again: $result" ;;
        once:called)
            fail "$label: the notice reached the model once" "the session-start context did not hold it; the result: $result" ;;
        *)
            fail "$label: the model called device_context" "the client never sent the model its result" ;;
    esac
    if hook_lines "$client" "$before" | grep -q 'event="stop"'; then
        ok "$label: Stop ran"
    else
        fail "$label: Stop ran" "no stop line in $HOOK_LOG"
    fi
}

# --- Tools: node and npm, berth's binaries -----------------------------------

if ! command -v npm >/dev/null || ! command -v node >/dev/null; then
    [ "$(id -u)" = 0 ] || die "node and npm are missing: install Debian's nodejs and npm packages"
    echo "installing node and npm from Debian's packages"
    (apt-get update -q && apt-get install -y -q nodejs npm) >"$WORK/apt.log" 2>&1 ||
        die "installing nodejs and npm failed; see $WORK/apt.log"
fi
command -v python3 >/dev/null || die "python3 is missing"

echo "building berth (debug)"
(cd "$ROOT" && cargo build --workspace --bins --quiet) || die "cargo build failed"
BIN="${CARGO_TARGET_DIR:-$ROOT/target}/debug"

PREFIX=${BERTH_CLIENTS_PREFIX:-$WORK/npm}
echo "installing the clients into $PREFIX"
LIMIT=600 bounded "$WORK/npm" npm install --prefix "$PREFIX" --no-audit --no-fund --loglevel=error \
    --cache "$WORK/npm-cache" \
    "@modelcontextprotocol/inspector@$INSPECTOR_VERSION" \
    "@anthropic-ai/claude-code@$CLAUDE_CODE_VERSION" \
    "@openai/codex@$CODEX_VERSION" \
    "@github/copilot@$COPILOT_VERSION" ||
    die "npm install failed: $(cat "$WORK/npm.out" "$WORK/npm.err" | tail -5)"

# --- The throwaway user --------------------------------------------------------

throwaway_user
unset CODEX_HOME CLAUDE_CONFIG_DIR COPILOT_HOME ANTHROPIC_API_KEY ANTHROPIC_BASE_URL
unset OPENAI_API_KEY OPENAI_BASE_URL GITHUB_TOKEN GH_TOKEN COPILOT_GITHUB_TOKEN
export PATH="$BIN:$PREFIX/node_modules/.bin:$PATH"
HOOK_LOG="$XDG_STATE_HOME/berth/berth-hook.log"

# A project whose file proposes a workspace this device never approved: the
# situation in which a session must ask the user once.
PROJECT="$HOME/project"
mkdir -p "$PROJECT/.berth"
git -C "$PROJECT" init -q || die "git init failed"
echo '{"workspace": "unapproved"}' >"$PROJECT/.berth/workspace.json"
cd "$PROJECT" || die "cannot enter $PROJECT"
berth resolve --json >"$WORK/resolve.json" 2>&1 || die "berth resolve failed: $(cat "$WORK/resolve.json")"
grep -q '"proposal": *"unapproved"' "$WORK/resolve.json" ||
    die "the project's proposal is not pending: $(cat "$WORK/resolve.json")"

for client in claude-code codex copilot-cli; do
    berth install "$client" >"$WORK/install-$client.log" 2>&1 ||
        die "berth install $client failed: $(cat "$WORK/install-$client.log")"
done

echo "checks (clients: inspector $INSPECTOR_VERSION, claude-code $CLAUDE_CODE_VERSION," \
    "codex $CODEX_VERSION, copilot $COPILOT_VERSION)"

# --- MCP Inspector: the registration as written, no model ---------------------

T="$WORK/inspector"
mkdir -p "$T"
if bounded "$T/list" mcp-inspector --cli --config "$HOME/.claude.json" --server berth --method tools/list &&
    grep -q '"name": "device_context"' "$T/list.out"; then
    ok "inspector: tools/list through ~/.claude.json lists device_context"
else
    fail "inspector: tools/list through ~/.claude.json lists device_context" "$(tail -c 300 "$T/list.err")"
fi
if bounded "$T/call" mcp-inspector --cli --config "$HOME/.claude.json" --server berth \
    --method tools/call --tool-name device_context; then
    python3 - "$T/call.out" "$NOTICE" >"$T/where" <<'EOF'
import json, sys
result = json.load(open(sys.argv[1]))
text = " ".join(c.get("text", "") for c in result.get("content", []))
print("text" if sys.argv[2] in text else "-", "structured" if sys.argv[2] in json.dumps(result.get("structuredContent")) else "-")
EOF
    read -r in_text in_structured <"$T/where"
    if [ "$in_text" = text ]; then
        ok "inspector: device_context's text content holds the notice"
    else
        fail "inspector: device_context's text content holds the notice" "$(head -c 200 "$T/call.out")"
    fi
    if [ "$in_structured" = structured ]; then
        ok "inspector: device_context's structuredContent holds the notice"
    else
        fail "inspector: device_context's structuredContent holds the notice" \
            "clients that pass the model only structuredContent lose it"
    fi
else
    fail "inspector: tools/call device_context" "$(tail -c 300 "$T/call.err")"
fi

# --- Claude Code --------------------------------------------------------------

T="$WORK/claude-code"
mkdir -p "$T"
if bounded "$T/list" claude mcp list && grep -q '^berth: .*Connected' "$T/list.out"; then
    ok "claude-code: \`claude mcp list\` shows berth connected"
else
    fail "claude-code: \`claude mcp list\` shows berth connected" "$(grep berth "$T/list.out" "$T/list.err" | head -3)"
fi

claude_turn() {
    local dir=$1
    shift
    start_model "$dir/model"
    ANTHROPIC_BASE_URL="$MODEL_URL" ANTHROPIC_API_KEY=fake-key DISABLE_AUTOUPDATER=1 \
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 \
        bounded "$dir/turn" claude -p "$PROMPT" --allowedTools mcp__berth__device_context "$@"
    local rc=$?
    stop_model
    return "$rc"
}

# As installed: the session-start hook and the server share Claude Code's
# session id, so the hook asks and the tool result must not ask again.
before=$(hook_log_length)
mkdir -p "$T/hooks"
claude_turn "$T/hooks"
check_turn "claude-code" claude-code "$before" "$T/hooks" $? once

# Without hooks (an MCP-only registration, or hooks that failed): the tool
# result is the only way the notice reaches the model.
mkdir -p "$T/nohooks"
claude_turn "$T/nohooks" --settings '{"disableAllHooks": true}'
rc=$?
saw=$(python3 "$FAKE_MODEL" saw "$T/nohooks/model" "$NOTICE")
if [ "$rc" -eq 0 ] && [ "$(head -1 <<<"$saw" | cut -d' ' -f1)" = result ]; then
    ok "claude-code without hooks: the device_context result the model got holds the notice"
else
    fail "claude-code without hooks: the device_context result the model got holds the notice" \
        "exit $rc; it got: $(sed -n 2p <<<"$saw")"
fi

# --- Codex ----------------------------------------------------------------------

T="$WORK/codex"
mkdir -p "$T"
if bounded "$T/list" codex mcp list --json &&
    python3 -c 'import json,sys; s=[x for x in json.load(open(sys.argv[1])) if x["name"]=="berth"]; sys.exit(not (s and s[0]["enabled"] and "BERTH_SOCKET" in s[0]["transport"]["env_vars"]))' "$T/list.out"; then
    ok "codex: \`codex mcp list\` shows berth enabled, forwarding BERTH_SOCKET"
else
    fail "codex: \`codex mcp list\` shows berth enabled, forwarding BERTH_SOCKET" "$(head -c 300 "$T/list.out")"
fi

before=$(hook_log_length)
mkdir -p "$T/turn"
start_model "$T/turn/model"
bounded "$T/turn/turn" codex exec --dangerously-bypass-hook-trust --skip-git-repo-check \
    -c model_provider=fake \
    -c "model_providers.fake={name=\"fake\",base_url=\"$MODEL_URL/v1\",wire_api=\"responses\"}" \
    -c approval_policy=never -m fake-model "$PROMPT"
rc=$?
stop_model
# Codex gives its servers no session id; berth links the hook and the server
# through the Codex process that started both, so the hook asks and the tool
# result does not ask again.
check_turn "codex" codex "$before" "$T/turn" "$rc" once

# --- Copilot CLI ------------------------------------------------------------------

T="$WORK/copilot"
mkdir -p "$T"
if bounded "$T/list" copilot mcp list && grep -q '^ *berth (local)' "$T/list.out"; then
    ok "copilot-cli: \`copilot mcp list\` shows berth"
else
    fail "copilot-cli: \`copilot mcp list\` shows berth" "$(head -c 300 "$T/list.out" "$T/list.err")"
fi

before=$(hook_log_length)
mkdir -p "$T/turn"
start_model "$T/turn/model"
COPILOT_OFFLINE=true COPILOT_AUTO_UPDATE=false COPILOT_ALLOW_ALL=true \
    COPILOT_PROVIDER_BASE_URL="$MODEL_URL" COPILOT_PROVIDER_TYPE=anthropic \
    COPILOT_PROVIDER_API_KEY=fake-key COPILOT_MODEL=claude-sonnet-4.5 \
    bounded "$T/turn/turn" copilot -p "$PROMPT" --allow-all-tools
rc=$?
stop_model
# berth-mcp shares the hooks' session id (COPILOT_AGENT_SESSION_ID), so the
# session-start context asks and the tool result rightly does not ask again.
check_turn "copilot-cli" copilot-cli "$before" "$T/turn" "$rc" once

echo "$PASSED passed, $FAILED failed"
[ "$FAILED" -eq 0 ]
