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
#   BERTH_CLIENTS_BIN     a folder holding berth, berthd, berth-mcp and
#                         berth-hook to run instead of a debug build (the
#                         release build: target/release-musl)

set -uo pipefail

# The versions docs/clients.md records results for.
INSPECTOR_VERSION=0.15.0
CLAUDE_CODE_VERSION=2.1.197
CODEX_VERSION=0.171.0
COPILOT_VERSION=1.0.102
# The workspace-aware server the README registers with {home}.
FILESYSTEM_SERVER_VERSION=2026.8.31
# Microsoft's JSON-with-comments parser, which VS Code's JSON support is built on.
JSONC_PARSER_VERSION=3.3.1

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

# The fake model API for one turn, recording requests in $1; with $2, a file of the
# tool calls it makes (fake_model.py says how).
start_model() {
    mkdir -p "$1"
    python3 "$FAKE_MODEL" serve "$1" "$1.port" ${2:+"$2"} &
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

# The daemon's log: its length, and whether a line since line $1 holds $2.
daemon_log_length() {
    if [ -f "$DAEMON_LOG" ]; then wc -l <"$DAEMON_LOG"; else echo 0; fi
}
daemon_logged_since() {
    tail -n "+$(($1 + 1))" "$DAEMON_LOG" 2>/dev/null | grep -qF "$2"
}

# What the daemon logs when a session's question goes to the client's form.
FORM_LINE="the session's question goes to the client's form"

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

if [ -n "${BERTH_CLIENTS_BIN:-}" ]; then
    # Another build of the four programs, e.g. the release build with
    # `berth` and `berth-hook` on musl (`.ci/platforms musl`: target/release-musl).
    BIN=$(cd "$BERTH_CLIENTS_BIN" && pwd) || die "BERTH_CLIENTS_BIN: no folder $BERTH_CLIENTS_BIN"
    for p in berth berthd berth-mcp berth-hook; do
        [ -x "$BIN/$p" ] || die "BERTH_CLIENTS_BIN: no $BIN/$p"
    done
    echo "berth from $BIN"
else
    echo "building berth (debug)"
    (cd "$ROOT" && cargo build --workspace --bins --quiet) || die "cargo build failed"
    BIN="${CARGO_TARGET_DIR:-$ROOT/target}/debug"
fi

PREFIX=${BERTH_CLIENTS_PREFIX:-$WORK/npm}
echo "installing the clients into $PREFIX"
LIMIT=600 bounded "$WORK/npm" npm install --prefix "$PREFIX" --no-audit --no-fund --loglevel=error \
    --cache "$WORK/npm-cache" \
    "@modelcontextprotocol/inspector@$INSPECTOR_VERSION" \
    "@anthropic-ai/claude-code@$CLAUDE_CODE_VERSION" \
    "@openai/codex@$CODEX_VERSION" \
    "@github/copilot@$COPILOT_VERSION" \
    "@modelcontextprotocol/server-filesystem@$FILESYSTEM_SERVER_VERSION" \
    "jsonc-parser@$JSONC_PARSER_VERSION" ||
    die "npm install failed: $(cat "$WORK/npm.out" "$WORK/npm.err" | tail -5)"

# --- The throwaway user --------------------------------------------------------

throwaway_user
unset CODEX_HOME CLAUDE_CONFIG_DIR COPILOT_HOME ANTHROPIC_API_KEY ANTHROPIC_BASE_URL
unset OPENAI_API_KEY OPENAI_BASE_URL GITHUB_TOKEN GH_TOKEN COPILOT_GITHUB_TOKEN
export PATH="$BIN:$PREFIX/node_modules/.bin:$PATH"
HOOK_LOG="$XDG_STATE_HOME/berth/berth-hook.log"
DAEMON_LOG="$XDG_STATE_HOME/berth/berthd.log"

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
logged=$(daemon_log_length)
claude_turn "$T/nohooks" --settings '{"disableAllHooks": true}'
rc=$?
saw=$(python3 "$FAKE_MODEL" saw "$T/nohooks/model" "$NOTICE")
if [ "$rc" -eq 0 ] && [ "$(head -1 <<<"$saw" | cut -d' ' -f1)" = result ]; then
    ok "claude-code without hooks: the device_context result the model got holds the notice"
else
    fail "claude-code without hooks: the device_context result the model got holds the notice" \
        "exit $rc; it got: $(sed -n 2p <<<"$saw")"
fi
# Claude Code declares forms, so berth asked in one first; \`claude -p\` cancels it.
if daemon_logged_since "$logged" "$FORM_LINE"; then
    ok "claude-code without hooks: the question went to Claude Code's form first (-p cancels it)"
else
    fail "claude-code without hooks: the question went to Claude Code's form first" \
        "no \"$FORM_LINE\" in $DAEMON_LOG"
fi

# The form, answered by the person: Claude Code's Elicitation hook plays them
# (answer_form.py), in a project nothing assigns. berth's own hooks are left
# out (--setting-sources project), since with them the session-start hook asks
# first and no form is shown; the registration is the installed one.
FORM_PROJECT="$HOME/form-project"
mkdir -p "$FORM_PROJECT" "$T/form"
git -C "$FORM_PROJECT" init -q || die "git init failed"
berth workspace create work >/dev/null 2>&1 || die "berth workspace create work failed"
elicitation_settings() {
    python3 -c 'import json, sys; print(json.dumps({"hooks": {"Elicitation": [{"matcher": "berth", "hooks": [{"type": "command", "command": "python3 %s %s work" % (sys.argv[1], sys.argv[2])}]}]}}))' \
        "$ROOT/tests/clients/answer_form.py" "$1"
}
(cd "$FORM_PROJECT" && claude_turn "$T/form" --setting-sources project \
    --mcp-config "$HOME/.claude.json" --settings "$(elicitation_settings "$T/form/asked.json")")
rc=$?
if [ "$rc" -eq 0 ] && python3 - "$T/form/asked.json" "$FORM_PROJECT" >"$T/form/check" 2>&1 <<'EOF'
import json, sys
asked = json.load(open(sys.argv[1]))
offered = asked["requested_schema"]["properties"]["workspace"]["enum"]
assert asked["mcp_server_name"] == "berth", asked
assert asked["message"] == f"Which workspace should {sys.argv[2]} use?", asked["message"]
assert {"default", "work", "a new workspace", "not now"} <= set(offered), offered
EOF
then
    ok "claude-code: berth's question reaches Claude Code's form, offering the device's workspaces"
else
    fail "claude-code: berth's question reaches Claude Code's form" \
        "exit $rc; $(cat "$T/form/check" "$T/form/asked.json" 2>/dev/null | tail -c 300)"
fi
result=$(python3 "$FAKE_MODEL" saw "$T/form/model" '"workspace":"work"' | sed -n 2p)
if grep -q '"workspace": *"work"' "$FORM_PROJECT/.berth/workspace.json" 2>/dev/null &&
    grep -q '"reason":"project-file"' <<<"$result" &&
    (cd "$FORM_PROJECT" && berth resolve --json) | grep -q '"workspace": *"work"'; then
    ok "claude-code: the form's answer is used: the project file written, the first result in that workspace"
else
    fail "claude-code: the form's answer is used" \
        "file: $(cat "$FORM_PROJECT/.berth/workspace.json" 2>&1 | tr -d '\n'); result: ${result:0:200}"
fi

# With berth's hooks as installed and the same Elicitation hook, in another
# project: the session-start hook asks, so no form is shown and the result does
# not ask again.
HOOKED_PROJECT="$HOME/hooked-project"
mkdir -p "$HOOKED_PROJECT" "$T/hooked"
git -C "$HOOKED_PROJECT" init -q || die "git init failed"
(cd "$HOOKED_PROJECT" && claude_turn "$T/hooked" --settings "$(elicitation_settings "$T/hooked/asked.json")")
rc=$?
saw=$(python3 "$FAKE_MODEL" saw "$T/hooked/model" "$NOTICE")
if [ "$rc" -eq 0 ] && [ ! -e "$T/hooked/asked.json" ] && [ "$(head -1 <<<"$saw")" = "called elsewhere" ]; then
    ok "claude-code with berth's hooks: the session-start hook asked once, and no form was shown"
else
    fail "claude-code with berth's hooks: asked once, no form" \
        "exit $rc; form shown: $([ -e "$T/hooked/asked.json" ] && echo yes || echo no); $(head -1 <<<"$saw")"
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

# Without berth's hooks (a CODEX_HOME holding only the MCP registration):
# Codex declares forms, so berth asks in one; \`codex exec\` declines it, and
# the result carries the notice instead.
CODEX_FORM_PROJECT="$HOME/codex-form-project"
mkdir -p "$CODEX_FORM_PROJECT" "$T/form/model" "$T/form/home"
git -C "$CODEX_FORM_PROJECT" init -q || die "git init failed"
cp "$HOME/.codex/config.toml" "$T/form/home/"
logged=$(daemon_log_length)
start_model "$T/form/model"
(cd "$CODEX_FORM_PROJECT" && CODEX_HOME="$T/form/home" bounded "$T/form/turn" codex exec \
    --skip-git-repo-check -c model_provider=fake \
    -c "model_providers.fake={name=\"fake\",base_url=\"$MODEL_URL/v1\",wire_api=\"responses\"}" \
    -c approval_policy=never -m fake-model "$PROMPT")
rc=$?
stop_model
saw=$(python3 "$FAKE_MODEL" saw "$T/form/model" "$NOTICE")
if [ "$rc" -eq 0 ] && daemon_logged_since "$logged" "$FORM_LINE" &&
    [ "$(head -1 <<<"$saw" | cut -d' ' -f1)" = result ] && [ ! -e "$CODEX_FORM_PROJECT/.berth" ]; then
    ok "codex without hooks: asked in a form, which codex exec declines; the result holds the notice, nothing written"
else
    fail "codex without hooks: the form declined, then the notice" \
        "exit $rc; form: $(daemon_logged_since "$logged" "$FORM_LINE" && echo asked || echo never); $(head -1 <<<"$saw")"
fi

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

# --- berth exec: a server handed {home} in a project just approved ---------------

# The README's workspace-aware server, registered for Claude Code. In a project
# approved with `workspace use` a moment ago no file tool has made the
# workspace's home yet; berth exec must make it before the server starts, or
# mcp-server-filesystem refuses ("None of the specified directories are
# accessible") and `claude mcp list` shows it failed.
T="$WORK/exec-home"
mkdir -p "$T"
SHOP="$HOME/shop"
mkdir -p "$SHOP"
git -C "$SHOP" init -q || die "git init failed"
cd "$SHOP" || die "cannot enter $SHOP"
SHOP_HOME="$BERTH_DATA_DIR/workspaces/shop"
if berth workspace use shop >"$T/use.log" 2>&1 && [ ! -e "$SHOP_HOME" ]; then
    if berth install claude-code --exec fs -- mcp-server-filesystem '{home}' >"$T/install.log" 2>&1; then
        if bounded "$T/list" claude mcp list && grep -q '^fs: .*Connected' "$T/list.out" && [ -d "$SHOP_HOME" ]; then
            ok "exec: \`claude mcp list\` shows mcp-server-filesystem {home} connected in a project just approved"
        else
            fail "exec: \`claude mcp list\` shows mcp-server-filesystem {home} connected in a project just approved" \
                "$(grep '^fs' "$T/list.out" "$T/list.err" | head -3); home made: $([ -d "$SHOP_HOME" ] && echo yes || echo no)"
        fi
        berth uninstall claude-code --exec fs >>"$T/install.log" 2>&1
    else
        fail "exec: berth install claude-code --exec fs" "$(tail -3 "$T/install.log")"
    fi
else
    fail "exec: a project just approved has no home yet" "$(tail -3 "$T/use.log"); home: $(ls -ld "$SHOP_HOME" 2>&1)"
fi
cd "$PROJECT" || die "cannot enter $PROJECT"

# --- The native-tool guard: the clients' own write tools into another workspace --------
#
# A session in shop (approved above) whose model writes into alpha, another approved
# project, with the client's own tool, and then into shop. berth's pre-tool hook must stop
# the first in the form each client obeys (Claude Code: `ask`, a denial in `-p`; Codex and the
# Copilot CLI: `deny`, in Copilot's flat form), hand the model the reason, and let the second
# through. Codex's models edit through `apply_patch` run from a shell call (`Bash` to the
# hook), also with the call's `workdir` in alpha; its sandbox is off, so berth alone decides.

T="$WORK/guard"
mkdir -p "$T"
ALPHA="$HOME/alpha"
mkdir -p "$ALPHA"
git -C "$ALPHA" init -q || die "git init failed"
(cd "$ALPHA" && berth workspace use alpha) >"$T/use.log" 2>&1 || die "workspace use alpha: $(cat "$T/use.log")"
cd "$SHOP" || die "cannot enter $SHOP"

# $1 label, $2 the turn's folder, $3 the file in alpha, $4 the file in shop, $5 the
# client's exit status.
check_guard() {
    local label=$1 dir=$2 theirs=$3 mine=$4 rc=$5 said
    said=$(python3 "$FAKE_MODEL" results "$dir/model")
    if [ "$rc" -eq 0 ] && [ ! -e "$theirs" ] && head -1 <<<"$said" | grep -q "belongs to workspace alpha"; then
        ok "$label: the write into another workspace is stopped, and the model is told why"
    else
        fail "$label: the write into another workspace is stopped, and the model is told why" \
            "exit $rc; written: $([ -e "$theirs" ] && echo yes || echo no); the model got: $(head -c 200 <<<"$said")"
    fi
    if [ -f "$mine" ]; then
        ok "$label: the write into its own project goes through"
    else
        fail "$label: the write into its own project goes through" "the model got: $(sed -n 2p <<<"$said" | head -c 200)"
    fi
}

# The calls a turn's model makes: $1 the file, then NAME ARGS-JSON pairs.
calls() {
    local out=$1
    shift
    python3 - "$out" "$@" <<'PY'
import json, sys
out, rest = sys.argv[1], sys.argv[2:]
json.dump([{"name": n, "input": json.loads(a)} for n, a in zip(rest[::2], rest[1::2])], open(out, "w"))
PY
}

# A shell call that runs apply_patch adding $1, as Codex's models make it; $2 more arguments.
codex_patch() {
    python3 - "$1" "${2:-{\}}" <<'PY'
import json, sys
path, extra = sys.argv[1], json.loads(sys.argv[2])
patch = f"*** Begin Patch\n*** Add File: {path}\n+x\n*** End Patch\n"
print(json.dumps(dict(cmd=f"apply_patch <<'PATCH'\n{patch}PATCH\n", **extra)))
PY
}

# The patch adding $1, as the input of Codex's freeform apply_patch tool (a JSON string).
codex_freeform_patch() {
    python3 -c 'import json, sys; print(json.dumps(f"*** Begin Patch\n*** Add File: {sys.argv[1]}\n+x\n*** End Patch\n"))' "$1"
}

# The input of Codex's code-mode `exec` (a JSON string of JavaScript) that adds $2 with the
# nested tool $1: `apply_patch`, or `exec_command` running it in a shell call.
code_mode_call() {
    python3 - "$1" "$2" <<'PY'
import json, sys
tool, path = sys.argv[1], sys.argv[2]
patch = f"*** Begin Patch\n*** Add File: {path}\n+x\n*** End Patch\n"
arg = json.dumps(patch) if tool == "apply_patch" else "{cmd: %s}" % json.dumps(f"apply_patch <<'PATCH'\n{patch}PATCH\n")
print(json.dumps(f"const result = await tools.{tool}({arg});\ntext(result);\n"))
PY
}

mkdir -p "$T/claude"
calls "$T/claude/calls.json" \
    Write "{\"file_path\": \"$ALPHA/claude.txt\", \"content\": \"x\"}" \
    Write "{\"file_path\": \"$SHOP/claude.txt\", \"content\": \"y\"}"
start_model "$T/claude/model" "$T/claude/calls.json"
ANTHROPIC_BASE_URL="$MODEL_URL" ANTHROPIC_API_KEY=fake-key DISABLE_AUTOUPDATER=1 \
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 \
    bounded "$T/claude/turn" claude -p "$PROMPT" --allowedTools Write
rc=$?
stop_model
check_guard "guard, claude-code -p" "$T/claude" "$ALPHA/claude.txt" "$SHOP/claude.txt" "$rc"

# One Codex turn in $1 whose model, $2, makes the calls in $1/calls.json; the sandbox is off.
codex_guard_turn() {
    start_model "$1/model" "$1/calls.json"
    bounded "$1/turn" codex exec --dangerously-bypass-hook-trust --skip-git-repo-check \
        -s danger-full-access -c model_provider=fake \
        -c "model_providers.fake={name=\"fake\",base_url=\"$MODEL_URL/v1\",wire_api=\"responses\"}" \
        -c approval_policy=never -m "$2" "$PROMPT"
    local rc=$?
    stop_model
    return "$rc"
}

mkdir -p "$T/codex"
calls "$T/codex/calls.json" \
    exec_command "$(codex_patch "$ALPHA/codex.txt")" \
    exec_command "$(codex_patch codex.txt)" \
    exec_command "$(codex_patch workdir.txt "{\"workdir\": \"$ALPHA\"}")"
codex_guard_turn "$T/codex" fake-model
rc=$?
check_guard "guard, codex (apply_patch in a shell call)" "$T/codex" "$ALPHA/codex.txt" "$SHOP/codex.txt" "$rc"
said=$(python3 "$FAKE_MODEL" results "$T/codex/model" | sed -n 3p)
if [ ! -e "$ALPHA/workdir.txt" ] && grep -q "belongs to workspace alpha" <<<"$said"; then
    ok "guard, codex: a patch run with its workdir in another workspace is stopped"
else
    fail "guard, codex: a patch run with its workdir in another workspace is stopped" \
        "written: $([ -e "$ALPHA/workdir.txt" ] && echo yes || echo no); the model got: $(head -c 200 <<<"$said")"
fi

# Codex's own apply_patch tool, a freeform one (the call's input is the patch): offered to
# gpt-5.5, the one bundled model of Codex 0.171 not in code mode. The hook sees `apply_patch`
# with the patch in `command`.
mkdir -p "$T/codex-direct"
calls "$T/codex-direct/calls.json" \
    apply_patch "$(codex_freeform_patch "$ALPHA/direct.txt")" \
    apply_patch "$(codex_freeform_patch direct.txt)"
codex_guard_turn "$T/codex-direct" gpt-5.5
check_guard "guard, codex (its apply_patch tool, gpt-5.5)" "$T/codex-direct" "$ALPHA/direct.txt" "$SHOP/direct.txt" $?

# Code mode: every other bundled model of Codex 0.171, its default gpt-6.2-sol among them, is
# offered one tool to act with, `exec`, whose input is JavaScript run in codex-code-mode-host;
# the script calls Codex's tools as `await tools.apply_patch(patch)` or
# `await tools.exec_command({cmd})`. Codex hands each of those calls to PreToolUse as it would
# a direct one (`apply_patch` with the patch in `command`, the shell call as `Bash`); the `exec`
# call itself reaches no hook. A refusal is thrown in the script, and reaches the model as its
# error.
mkdir -p "$T/codex-code-mode"
calls "$T/codex-code-mode/calls.json" \
    exec "$(code_mode_call apply_patch "$ALPHA/code-mode.txt")" \
    exec "$(code_mode_call apply_patch code-mode.txt)" \
    exec "$(code_mode_call exec_command "$ALPHA/code-mode-shell.txt")"
codex_guard_turn "$T/codex-code-mode" gpt-6.2-sol
rc=$?
offered=$(python3 "$FAKE_MODEL" tools "$T/codex-code-mode/model" | tr '\n' ' ')
if grep -q "custom functions.exec " <<<"$offered" && ! grep -qE "[ .](apply_patch|exec_command) " <<<" $offered"; then
    ok "guard, codex code mode: gpt-6.2-sol is offered exec (JavaScript), and Codex's edit tools only inside it"
else
    fail "guard, codex code mode: gpt-6.2-sol is offered exec, the edit tools only inside it" "offered: $offered"
fi
check_guard "guard, codex code mode (tools.apply_patch from exec)" "$T/codex-code-mode" \
    "$ALPHA/code-mode.txt" "$SHOP/code-mode.txt" "$rc"
said=$(python3 "$FAKE_MODEL" results "$T/codex-code-mode/model" | sed -n 3p)
if [ ! -e "$ALPHA/code-mode-shell.txt" ] && grep -q "belongs to workspace alpha" <<<"$said"; then
    ok "guard, codex code mode: apply_patch in a shell call from exec (tools.exec_command) is stopped"
else
    fail "guard, codex code mode: apply_patch in a shell call from exec is stopped" \
        "written: $([ -e "$ALPHA/code-mode-shell.txt" ] && echo yes || echo no); the model got: $(head -c 200 <<<"$said")"
fi

mkdir -p "$T/copilot"
calls "$T/copilot/calls.json" \
    create "{\"path\": \"$ALPHA/copilot.txt\", \"file_text\": \"x\"}" \
    create "{\"path\": \"$SHOP/copilot.txt\", \"file_text\": \"y\"}"
start_model "$T/copilot/model" "$T/copilot/calls.json"
COPILOT_OFFLINE=true COPILOT_AUTO_UPDATE=false COPILOT_ALLOW_ALL=true \
    COPILOT_PROVIDER_BASE_URL="$MODEL_URL" COPILOT_PROVIDER_TYPE=anthropic \
    COPILOT_PROVIDER_API_KEY=fake-key COPILOT_MODEL=claude-sonnet-4.5 \
    bounded "$T/copilot/turn" copilot -p "$PROMPT" --allow-all-tools
rc=$?
stop_model
check_guard "guard, copilot-cli" "$T/copilot" "$ALPHA/copilot.txt" "$SHOP/copilot.txt" "$rc"

# Claude Code's interactive TUI, in tmux: berth's `ask` must reach the person with its
# reason. Its prompt for a file write has no room for a hook's reason, so berth hands the
# reason to the terminal as a notification (the hook's `terminalSequence`, which Claude Code
# writes out itself): `script` keeps every byte Claude Code writes to the terminal, and the
# screen is read at the permission prompt. The person refuses ("3", No) the first time, and
# allows ("1", Yes) the second, after which the transcript shows berth's reason too.
tui_turn() {
    local dir=$1 file=$2 key=$3
    mkdir -p "$dir"
    calls "$dir/calls.json" Write "{\"file_path\": \"$file\", \"content\": \"x\"}"
    start_model "$dir/model" "$dir/calls.json"
    tmux new-session -d -s berth-tui -x 160 -y 50 \
        "script -q -f $dir/terminal.raw -c 'env ANTHROPIC_BASE_URL=$MODEL_URL ANTHROPIC_API_KEY=fake-key-for-the-tui DISABLE_AUTOUPDATER=1 CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 claude'"
    for _ in $(seq 60); do
        sleep 0.5
        tmux capture-pane -p -t berth-tui >"$dir/start.txt" 2>/dev/null
        grep -q "for shortcuts" "$dir/start.txt" && break
    done
    tmux send-keys -t berth-tui "Write the file" Enter
    for _ in $(seq 60); do
        sleep 0.5
        tmux capture-pane -p -t berth-tui >"$dir/prompt.txt" 2>/dev/null
        grep -q "Do you want to create $(basename "$file")" "$dir/prompt.txt" && break
    done
    # What the terminal had been told when the person was asked.
    cp "$dir/terminal.raw" "$dir/terminal-at-prompt.raw" 2>/dev/null
    tmux send-keys -t berth-tui "$key"
    for _ in $(seq 20); do
        sleep 0.5
        tmux capture-pane -p -t berth-tui >"$dir/after.txt" 2>/dev/null
        grep -q "berth conformance: done" "$dir/after.txt" && break
    done
    tmux kill-session -t berth-tui 2>/dev/null
    stop_model
}

if command -v tmux >/dev/null && command -v script >/dev/null; then
    python3 - "$HOME/.claude.json" "$SHOP" <<'EOF'
import json, sys
path, shop = sys.argv[1], sys.argv[2]
d = json.load(open(path))
d.update(hasCompletedOnboarding=True, theme="dark")
d["customApiKeyResponses"] = {"approved": ["fake-key-for-the-tui"[-20:]], "rejected": []}
d.setdefault("projects", {}).setdefault(shop, {})["hasTrustDialogAccepted"] = True
json.dump(d, open(path, "w"))
EOF
    REASON="berth: this session works in workspace shop; "
    tui_turn "$T/tui" "$ALPHA/tui.txt" 3
    if grep -q "Do you want to create tui.txt" "$T/tui/prompt.txt" && [ ! -e "$ALPHA/tui.txt" ]; then
        ok "guard, claude-code TUI: the write into another workspace is put to the person, who refuses it"
    else
        fail "guard, claude-code TUI: the write is put to the person" "$(grep -v '^$' "$T/tui/prompt.txt" | tail -12)"
    fi
    # An OSC 9 notification (tmux's TERM_PROGRAM names no other form), perhaps wrapped for
    # tmux, carrying berth's reason, written before the person answered.
    if grep -a -q "]9;${REASON}.*belongs to workspace alpha" "$T/tui/terminal-at-prompt.raw"; then
        ok "guard, claude-code TUI: the person's terminal is shown berth's reason as the question is put"
    else
        fail "guard, claude-code TUI: the person's terminal is shown berth's reason as the question is put" \
            "no notification with the reason among the bytes written before the answer ($T/tui/terminal-at-prompt.raw)"
    fi
    tui_turn "$T/tui-yes" "$ALPHA/tui-yes.txt" 1
    if [ -e "$ALPHA/tui-yes.txt" ] && tr -d '\n' <"$T/tui-yes/after.txt" | tr -s ' ' | grep -q "says: ${REASON}"; then
        ok "guard, claude-code TUI: a write the person allows goes through, and the transcript shows berth's reason"
    else
        fail "guard, claude-code TUI: a write the person allows goes through, with berth's reason" \
            "written: $([ -e "$ALPHA/tui-yes.txt" ] && echo yes || echo no); $(grep -v '^$' "$T/tui-yes/after.txt" | tail -8)"
    fi
fi

cd "$PROJECT" || die "cannot enter $PROJECT"

# --- JSON with comments: VS Code's mcp.json, the Copilot CLI's mcp-config.json ---------
#
# VS Code itself does not run here. What this proves: berth's entry, installed into a
# commented mcp.json with trailing commas in the shape of VS Code's documentation, leaves
# every comment, parses without an error in Microsoft's jsonc-parser (VS Code's format), and,
# started as that entry says with ${workspaceFolder} replaced by the project, runs berth-mcp
# in the project even from `/`; uninstall gives back the bytes. Not proved: that VS Code loads
# the file, resolves the variable the same way and starts the server. The Copilot CLI does
# run: it lists and uses berth from its commented mcp-config.json. Claude Code's rule is
# checked against Claude Code itself: it refuses a commented .mcp.json, and so does berth.

T="$WORK/jsonc"
mkdir -p "$T"
VSCODE_MCP="$XDG_CONFIG_HOME/Code/User/mcp.json"
mkdir -p "$(dirname "$VSCODE_MCP")"
cat >"$VSCODE_MCP" <<'EOF'
// VS Code's MCP servers: https://code.visualstudio.com/docs/copilot/chat/mcp-servers
{
  // 💡 Inputs are prompted on first server start, then stored securely by VS Code.
  "inputs": [],
  "servers": {
    // https://github.com/github/github-mcp-server/
    "github": {
      "type": "http",
      "url": "https://api.githubcopilot.com/mcp/", /* not started here */
    },
  },
}
EOF
cp "$VSCODE_MCP" "$T/mcp.json.before"
if berth install vscode >"$T/install.out" 2>&1; then
    # Parses as VS Code's format does, keeps each comment, and gives the Inspector the entry
    # as VS Code would start it.
    if node - "$PREFIX/node_modules/jsonc-parser" "$VSCODE_MCP" "$T/mcp.json.before" \
        "$PROJECT" "$T/inspector.json" >"$T/vscode.check" 2>&1 <<'EOF'
const [jsonc, file, before, project, out] = process.argv.slice(2);
const fs = require("fs");
const { parse, printParseErrorCode } = require(jsonc);
const text = fs.readFileSync(file, "utf8");
const errors = [];
const doc = parse(text, errors, { allowTrailingComma: true, disallowComments: false });
if (errors.length) throw new Error("parse errors: " + errors.map((e) => printParseErrorCode(e.error) + "@" + e.offset).join(", "));
for (const line of fs.readFileSync(before, "utf8").split("\n").filter((l) => l.includes("//") || l.includes("/*"))) {
    if (!text.includes(line)) throw new Error("a comment line went: " + line);
}
const entry = doc.servers && doc.servers.berth;
if (!entry || !doc.servers.github) throw new Error("servers: " + JSON.stringify(doc.servers));
const args = (entry.args || []).map((a) => a.replaceAll("${workspaceFolder}", project));
fs.writeFileSync(out, JSON.stringify({ mcpServers: { berth: { command: entry.command, args } } }));
console.log("args: " + JSON.stringify(args));
EOF
    then
        ok "vscode: berth's entry in a commented mcp.json parses as VS Code's format, comments kept"
        if (cd / && bounded "$T/call" mcp-inspector --cli --config "$T/inspector.json" --server berth \
            --method tools/call --tool-name device_context) && grep -qF "$NOTICE" "$T/call.out"; then
            ok "vscode: the entry, started from / with \${workspaceFolder} as the project, answers for the project"
        else
            fail "vscode: the entry answers for the project" "$(tail -c 300 "$T/call.out" "$T/call.err")"
        fi
    else
        fail "vscode: berth's entry in a commented mcp.json parses as VS Code's format" "$(tail -c 400 "$T/vscode.check")"
    fi
    berth doctor >"$T/doctor.out" 2>&1
    if grep -q '^ok *client vscode' "$T/doctor.out"; then
        ok "vscode: berth doctor finds the commented file registered as install writes it"
    else
        fail "vscode: berth doctor on the commented file" "$(grep vscode "$T/doctor.out" | head -3)"
    fi
    berth uninstall vscode >"$T/uninstall.out" 2>&1
    if cmp -s "$VSCODE_MCP" "$T/mcp.json.before"; then
        ok "vscode: uninstall gives back the commented mcp.json byte for byte"
    else
        fail "vscode: uninstall gives back the commented mcp.json byte for byte" "$(diff "$T/mcp.json.before" "$VSCODE_MCP" | head -5)"
    fi
    berth doctor >"$T/doctor-after.out" 2>&1
    # The clients line names every client; only a problem line would be about the file.
    if grep '^problem' "$T/doctor-after.out" | grep -q vscode; then
        fail "vscode: doctor reports nothing of a commented file berth is not in" "$(grep vscode "$T/doctor-after.out" | head -2)"
    else
        ok "vscode: doctor reports nothing of a commented file berth is not in"
    fi
else
    fail "vscode: berth install into a commented mcp.json with trailing commas" "$(tail -c 300 "$T/install.out")"
fi

# The Copilot CLI's own file with comments and trailing commas, and a server of the user's.
COPILOT_MCP="$HOME/.copilot/mcp-config.json"
berth uninstall copilot-cli >/dev/null 2>&1
mkdir -p "$HOME/.copilot"
cat >"$COPILOT_MCP" <<'EOF'
{
  // mine, kept as written
  "mcpServers": {
    "mine": {"type": "local", "command": "cat", "args": [], "tools": ["*"],},
  },
}
EOF
cp "$COPILOT_MCP" "$T/copilot.before"
if berth install copilot-cli >"$T/copilot-install.out" 2>&1 && grep -qF "// mine, kept as written" "$COPILOT_MCP" &&
    bounded "$T/copilot-list" copilot mcp list && grep -q '^ *berth (local)' "$T/copilot-list.out" &&
    grep -q '^ *mine (local)' "$T/copilot-list.out"; then
    ok "copilot-cli: \`copilot mcp list\` shows berth and the user's server from the commented file"
else
    fail "copilot-cli: berth in a commented mcp-config.json" "$(tail -c 300 "$T/copilot-install.out" "$T/copilot-list.out" 2>/dev/null)"
fi
before=$(hook_log_length)
mkdir -p "$T/copilot-turn"
start_model "$T/copilot-turn/model"
COPILOT_OFFLINE=true COPILOT_AUTO_UPDATE=false COPILOT_ALLOW_ALL=true \
    COPILOT_PROVIDER_BASE_URL="$MODEL_URL" COPILOT_PROVIDER_TYPE=anthropic \
    COPILOT_PROVIDER_API_KEY=fake-key COPILOT_MODEL=claude-sonnet-4.5 \
    bounded "$T/copilot-turn/turn" copilot -p "$PROMPT" --allow-all-tools
rc=$?
stop_model
check_turn "copilot-cli (commented mcp-config.json)" copilot-cli "$before" "$T/copilot-turn" "$rc" seen
berth uninstall copilot-cli >/dev/null 2>&1
if cmp -s "$COPILOT_MCP" "$T/copilot.before"; then
    ok "copilot-cli: uninstall gives back the commented mcp-config.json byte for byte"
else
    fail "copilot-cli: uninstall gives back the commented mcp-config.json" "$(diff "$T/copilot.before" "$COPILOT_MCP" | head -5)"
fi

# Claude Code reads plain JSON: a commented project .mcp.json is refused by Claude Code, and
# by berth naming that rule.
COMMENTED="$HOME/commented"
mkdir -p "$COMMENTED"
git -C "$COMMENTED" init -q
printf '{\n  // mine\n  "mcpServers": {}\n}\n' >"$COMMENTED/.mcp.json"
(cd "$COMMENTED" && bounded "$T/claude-list" claude mcp list)
(cd "$COMMENTED" && berth install claude-code --scope project) >"$T/claude-install.out" 2>&1
rc=$?
if grep -qi "not a valid JSON" "$T/claude-list.out" "$T/claude-list.err" && [ "$rc" -eq 1 ] &&
    grep -q "Claude Code reads this file as plain JSON" "$T/claude-install.out"; then
    ok "claude-code: a commented .mcp.json is refused by Claude Code and by berth, naming Claude Code's rule"
else
    fail "claude-code: a commented .mcp.json is refused by both" \
        "claude: $(grep -i json "$T/claude-list.out" "$T/claude-list.err" | head -2); berth exit $rc: $(tail -c 200 "$T/claude-install.out")"
fi

# --- the roots relay: a server that follows roots writes into the workspace's home -------

# mcp-server-filesystem replaces its allowed folders with the client's roots, and Claude Code
# answers roots/list with its project folder: without the relay a write into the workspace's
# home was refused. Registered with --exec, the server's roots/list is answered by berth with
# the home (ADR 0051).
T="$WORK/relay"
mkdir -p "$T"
cd "$SHOP" || die "cannot enter $SHOP"
if berth install claude-code --exec fs -- mcp-server-filesystem '{home}' >"$T/install.log" 2>&1 &&
    grep -q -- '--roots' "$SHOP/.mcp.json" "$HOME/.claude.json" 2>/dev/null; then
    calls "$T/calls.json" \
        mcp__fs__write_file "{\"path\": \"$SHOP_HOME/relay.txt\", \"content\": \"through the relay\"}"
    start_model "$T/model" "$T/calls.json"
    ANTHROPIC_BASE_URL="$MODEL_URL" ANTHROPIC_API_KEY=fake-key DISABLE_AUTOUPDATER=1 \
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 \
        bounded "$T/turn" claude -p "$PROMPT" --allowedTools mcp__fs__write_file
    rc=$?
    stop_model
    if [ "$(cat "$SHOP_HOME/relay.txt" 2>/dev/null)" = "through the relay" ]; then
        ok "relay: mcp-server-filesystem behind berth's roots relay writes into the workspace's home under Claude Code"
    else
        fail "relay: mcp-server-filesystem writes into the workspace's home under Claude Code" \
            "exit $rc; the model got: $(python3 "$FAKE_MODEL" results "$T/model" | head -c 300)"
    fi
    berth uninstall claude-code --exec fs >>"$T/install.log" 2>&1
else
    fail "relay: berth install claude-code --exec fs registers the relay" "$(tail -3 "$T/install.log")"
fi
cd "$PROJECT" || die "cannot enter $PROJECT"

echo "$PASSED passed, $FAILED failed"
[ "$FAILED" -eq 0 ]
