#!/usr/bin/env bash
# The README's worked example, for real: basic-memory (from PyPI) registered
# with `berth install claude-code --exec memory -- basic-memory mcp --project
# {workspace}`, then started exactly as that registration says, from three
# folders, by an MCP client (the Python `mcp` package basic-memory brings):
#
#   - two projects approved for two workspaces land their notes in two
#     basic-memory projects of the same names;
#   - a cloned repository whose project file proposes one of them redirects
#     nothing: the wrapper refuses to start there, and no note is written.
#
#   tests/clients/basic-memory.sh
#
# Everything happens in a throwaway HOME with its own data, state and runtime
# folders; the user's own files and daemon are never touched. Needs PyPI and
# Python 3.12 or newer, so it is not part of .ci/run. Prints one line per
# check and `N passed, N failed`; exits 1 on any failure.
#
# Environment:
#   BERTH_BM_PYTHON  the Python (3.12+) to make the venv with (default: the
#                    first of python3.13, python3.12, python3 that is new enough,
#                    then pyenv's)
#   BERTH_BM_VENV    a venv to install basic-memory into and keep (default: a
#                    temporary one)
#   BERTH_BM_KEEP=1  keep the work folder

set -uo pipefail

LIMIT=180
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
WORK=$(mktemp -d /tmp/berth-basic-memory.XXXXXX)
source "$ROOT/tests/clients/lib.sh"

cleanup() { end_throwaway "${BERTH_BM_KEEP:-}"; }
trap cleanup EXIT
trap 'exit 130' INT TERM

new_enough() { "$1" -c 'import sys; sys.exit(sys.version_info < (3, 12))' 2>/dev/null; }

find_python() {
    local py
    for py in ${BERTH_BM_PYTHON:-} python3.13 python3.12 python3; do
        command -v "$py" >/dev/null && new_enough "$py" && { command -v "$py"; return; }
    done
    if command -v pyenv >/dev/null; then
        for py in "$(pyenv root)"/versions/3.1[2-9]*/bin/python3; do
            [ -x "$py" ] && new_enough "$py" && { echo "$py"; return; }
        done
    fi
    return 1
}

# --- Tools ---------------------------------------------------------------------

PYTHON=$(find_python) || die "basic-memory needs Python 3.12 or newer; set BERTH_BM_PYTHON"
VENV=${BERTH_BM_VENV:-$WORK/venv}
if [ ! -x "$VENV/bin/basic-memory" ]; then
    echo "installing basic-memory into $VENV (with $PYTHON)"
    "$PYTHON" -m venv "$VENV" || die "cannot make a venv with $PYTHON"
    timeout 900 "$VENV/bin/pip" install --quiet --cache-dir "$WORK/pip-cache" basic-memory \
        >"$WORK/pip.log" 2>&1 || die "pip install basic-memory failed: $(tail -5 "$WORK/pip.log")"
fi
echo "basic-memory $("$VENV/bin/pip" show basic-memory 2>/dev/null | sed -n 's/^Version: //p')"

echo "building berth (debug)"
(cd "$ROOT" && cargo build --workspace --bins --quiet) || die "cargo build failed"
BIN="${CARGO_TARGET_DIR:-$ROOT/target}/debug"

# --- The throwaway user --------------------------------------------------------

throwaway_user
unset CLAUDE_PROJECT_DIR
export PATH="$BIN:$VENV/bin:$PATH"

# Two projects approved for two workspaces, and a clone proposing one of them.
mkdir -p "$WORK/src/shop/.git" "$WORK/src/blog/.git" "$WORK/src/clone/.berth" "$WORK/src/clone/.git"
(cd "$WORK/src/shop" && berth workspace use shop >/dev/null) || die "berth workspace use shop failed"
(cd "$WORK/src/blog" && berth workspace use blog >/dev/null) || die "berth workspace use blog failed"
echo '{"workspace": "shop"}' >"$WORK/src/clone/.berth/workspace.json"

# basic-memory's projects, named as the workspaces; its own default is `main`.
for p in shop blog; do
    timeout "$LIMIT" basic-memory project add "$p" "$WORK/notes/$p" >"$WORK/bm-add-$p.log" 2>&1 ||
        die "basic-memory project add $p failed: $(tail -3 "$WORK/bm-add-$p.log")"
done

# The README's one line.
if berth install claude-code --exec memory -- basic-memory mcp --project '{workspace}' \
    >"$WORK/install.log" 2>&1; then
    ok "berth install claude-code --exec memory registers the wrapped server"
else
    die "berth install --exec failed: $(cat "$WORK/install.log")"
fi

# An MCP client that starts the `memory` server as ~/.claude.json registers
# it, in folder $1, and writes one note without naming a project.
cat >"$WORK/client.py" <<'EOF'
import asyncio, json, os, sys
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

async def main(cwd, title):
    entry = json.load(open(os.path.expanduser("~/.claude.json")))["mcpServers"]["memory"]
    params = StdioServerParameters(command=entry["command"], args=entry["args"],
                                   env=dict(os.environ), cwd=cwd)
    async with stdio_client(params) as (r, w):
        async with ClientSession(r, w) as s:
            await s.initialize()
            res = await s.call_tool("write_note", {
                "title": title, "content": f"# {title}\nwritten from {cwd}", "directory": "notes"})
            print(res.content[0].text if res.content else res)

asyncio.run(main(sys.argv[1], sys.argv[2]))
EOF

note() { timeout "$LIMIT" python "$WORK/client.py" "$WORK/src/$1" "$2" >"$WORK/$1.out" 2>"$WORK/$1.err"; }

# --- Checks --------------------------------------------------------------------

note shop "shop-note" || fail "a session in the shop project writes a note" "$(tail -c 400 "$WORK/shop.err")"
note blog "blog-note" || fail "a session in the blog project writes a note" "$(tail -c 400 "$WORK/blog.err")"
if [ -f "$WORK/notes/shop/notes/shop-note.md" ] && [ -f "$WORK/notes/blog/notes/blog-note.md" ]; then
    ok "two approved projects land their notes in two basic-memory projects (shop, blog)"
else
    fail "two approved projects land their notes in two basic-memory projects" \
        "found: $(cd "$WORK" && find notes home/basic-memory -name '*.md' 2>/dev/null | tr '\n' ' ')"
fi
if [ ! -e "$WORK/notes/shop/notes/blog-note.md" ] && [ ! -e "$WORK/notes/blog/notes/shop-note.md" ]; then
    ok "neither note is in the other's project"
else
    fail "neither note is in the other's project" "a note crossed over"
fi

if note clone "clone-note"; then
    fail "the clone's proposal redirects nothing" "the server started and wrote: $(cat "$WORK/clone.out")"
else
    ok "the wrapped server does not start in the clone (its proposal is not an approval)"
fi
if find "$WORK/notes" "$HOME/basic-memory" -name 'clone-note.md' 2>/dev/null | grep -q .; then
    fail "no note from the clone anywhere" "$(find "$WORK/notes" "$HOME/basic-memory" -name 'clone-note.md')"
else
    ok "no note from the clone anywhere, not in shop and not in basic-memory's default project"
fi
(cd "$WORK/src/clone" && berth exec -- basic-memory mcp --project '{workspace}' \
    </dev/null >"$WORK/clone-exec.out" 2>"$WORK/clone-exec.err")
if grep -q "berth workspace use shop" "$WORK/clone-exec.err" && [ ! -s "$WORK/clone-exec.out" ]; then
    ok "berth exec in the clone says how to approve the proposal, on stderr only"
else
    fail "berth exec in the clone says how to approve the proposal" "stderr: $(cat "$WORK/clone-exec.err")"
fi

if berth uninstall claude-code --exec memory >"$WORK/uninstall.log" 2>&1 &&
    ! grep -q '"memory"' "$HOME/.claude.json" 2>/dev/null; then
    ok "berth uninstall claude-code --exec memory removes it"
else
    fail "berth uninstall claude-code --exec memory removes it" "$(cat "$WORK/uninstall.log")"
fi

echo "$PASSED passed, $FAILED failed"
[ "$FAILED" -eq 0 ]
