#!/usr/bin/env python3
"""Drives one berth-mcp session over stdio as an editor would, for tests/platform/scenario.sh.

JSON-RPC 2.0, one message a line, protocol 2025-06-18; the standard library only, so it runs
wherever the scenario does (natively, or with berth-mcp.exe under Wine). It prints one line per
check, `ok - <what>` or `not ok - <what>: <why>`, which the scenario counts, and exits 1 when any
check failed.

    mcp_drive.py approved   --workspace W --project P [--label L] -- CMD [ARGS...]
        handshake, the tool list, and device_context in a project approved for W (no notice);
    mcp_drive.py unassigned --use W --project P [--label L] -- CMD [ARGS...]
        in a project nothing assigns: the ask-once notice on the first device_context only,
        use_workspace W, then a qualified write and read of ./notes/a.md.

CMD starts berth-mcp (e.g. `berth-mcp --cwd P`, or `wine64 berth-mcp.exe --cwd Z:\\...`).
P is the project folder as the daemon spells it (a Windows path under Wine).
"""

import argparse
import json
import queue
import subprocess
import sys
import threading

PROTOCOL = "2025-06-18"
TOOLS = ["device_context", "use_workspace", "list_workspaces", "ls", "read", "write",
         "edit", "move", "delete", "search"]
# Not ASCII on purpose: the text crosses JSON, the daemon and the file system both ways.
TEXT = "notes from the platform scenario: caf\u00e9 \u2713\nsecond line\n"

failed = 0


def check(what, good, why=""):
    global failed
    if good:
        print(f"ok - {what}", flush=True)
    else:
        failed += 1
        print(f"not ok - {what}: {why}", flush=True)
    return good


def same_path(a, b):
    """Paths equal as the daemon may spell them: Windows's \\\\?\\ prefix and case aside."""
    def norm(p):
        p = p or ""
        if p.startswith("\\\\?\\"):
            p = p[4:]
        p = p.rstrip("\\/")
        return p.lower() if p[1:2] == ":" else p  # a drive letter: Windows compares case-blind
    return isinstance(a, str) and norm(a) == norm(b)


class Session:
    """One berth-mcp child; request() sends a request and returns its reply (or None)."""

    def __init__(self, cmd, timeout, log):
        self.timeout = timeout
        self.child = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                      stderr=log)
        self.lines = queue.Queue()
        self.next_id = 1
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for raw in self.child.stdout:
            self.lines.put(raw)
        self.lines.put(None)

    def send(self, msg):
        self.child.stdin.write((json.dumps(msg) + "\n").encode())
        self.child.stdin.flush()

    def request(self, method, params):
        rid = self.next_id
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        while True:
            try:
                raw = self.lines.get(timeout=self.timeout)
            except queue.Empty:
                return {"error": f"no reply to {method} within {self.timeout} s"}
            if raw is None:
                return {"error": f"berth-mcp closed stdout before answering {method}"}
            try:
                msg = json.loads(raw.decode().strip())
            except ValueError as e:
                return {"error": f"not JSON on stdout ({e}): {raw[:200]!r}"}
            if "method" in msg and "id" in msg:  # a request of the server's: we offer nothing
                self.send({"jsonrpc": "2.0", "id": msg["id"],
                           "error": {"code": -32601, "message": "not supported"}})
            elif msg.get("id") == rid:
                return msg

    def call(self, tool, args):
        """tools/call: (text, structured content, isError) or raises on a protocol error."""
        reply = self.request("tools/call", {"name": tool, "arguments": args})
        if "result" not in reply:
            raise RuntimeError(f"tools/call {tool}: {reply.get('error')}")
        r = reply["result"]
        text = "".join(c.get("text", "") for c in r.get("content", []) if c.get("type") == "text")
        return text, r.get("structuredContent") or {}, r.get("isError") is True

    def close(self):
        """Closes stdin, as an editor does at the end; berth-mcp must then exit 0."""
        self.child.stdin.close()
        try:
            return self.child.wait(timeout=self.timeout)
        except subprocess.TimeoutExpired:
            self.child.kill()
            return f"still running {self.timeout} s after stdin closed"


def handshake(s, label):
    reply = s.request("initialize", {"protocolVersion": PROTOCOL, "capabilities": {},
                                     "clientInfo": {"name": "berth-platform-scenario",
                                                    "version": "1"}})
    r = reply.get("result") or {}
    check(f"{label}: initialize answers protocol {PROTOCOL}",
          r.get("protocolVersion") == PROTOCOL, json.dumps(reply)[:300])
    s.send({"jsonrpc": "2.0", "method": "notifications/initialized"})


def approved(s, a):
    label = a.label
    handshake(s, label)
    reply = s.request("tools/list", {})
    names = [t.get("name") for t in (reply.get("result") or {}).get("tools", [])]
    check(f"{label}: tools/list lists berth's ten tools", names == TOOLS, f"got {names}")
    _, ctx, err = s.call("device_context", {})
    check(f"{label}: device_context says workspace {a.workspace}, reason project-file",
          not err and ctx.get("workspace") == a.workspace and ctx.get("reason") == "project-file",
          json.dumps(ctx)[:300])
    check(f"{label}: device_context names the project",
          same_path(ctx.get("project"), a.project), f"project {ctx.get('project')!r}")
    check(f"{label}: an approved project gets no notice", not ctx.get("notice"),
          f"notice {ctx.get('notice')!r}")


def unassigned(s, a):
    label = a.label
    handshake(s, label)
    text, ctx, err = s.call("device_context", {})
    check(f"{label}: first device_context: a project nothing assigns (reason active)",
          not err and ctx.get("reason") == "active" and same_path(ctx.get("project"), a.project),
          json.dumps(ctx)[:300])
    check(f"{label}: the first result carries the ask-once notice",
          isinstance(ctx.get("notice"), str) and ctx["notice"] != "" and text.startswith("berth: "),
          f"notice {ctx.get('notice')!r}, text {text[:120]!r}")
    text, ctx, err = s.call("device_context", {})
    check(f"{label}: the second device_context has no notice",
          not err and not ctx.get("notice") and not text.startswith("berth: "),
          f"notice {ctx.get('notice')!r}, text {text[:120]!r}")
    text, r, err = s.call("use_workspace", {"name": a.use})
    pf = r.get("project_file") or ""
    check(f"{label}: use_workspace {a.use} creates it, approves the project and re-pins",
          not err and r.get("workspace") == a.use and r.get("created") is True
          and r.get("switched") is True
          and pf.replace("\\", "/").endswith(".berth/workspace.json"),
          f"{json.dumps(r)[:300]} {text[:200]!r}")
    _, ctx, err = s.call("device_context", {})
    check(f"{label}: device_context now says {a.use} (project-file)",
          not err and ctx.get("workspace") == a.use and ctx.get("reason") == "project-file",
          json.dumps(ctx)[:300])
    text, w, err = s.call("write", {"path": "./notes/a.md", "content": TEXT})
    check(f"{label}: write ./notes/a.md",
          not err and w.get("bytes") == len(TEXT.encode()) and bool(w.get("path")),
          f"{json.dumps(w)[:300]} {text[:200]!r}")
    text, rd, err = s.call("read", {"path": "./notes/a.md"})
    check(f"{label}: read ./notes/a.md gives back the same text",
          not err and rd.get("content") == TEXT, f"{json.dumps(rd)[:300]} {text[:200]!r}")
    # Every path a tool returns is qualified: quoting the write's path back reaches the file.
    text, rd2, err = s.call("read", {"path": w.get("path") or "./notes/a.md"})
    check(f"{label}: the qualified path the write returned ({w.get('path')}) reads the same file",
          not err and rd2.get("content") == TEXT, f"{json.dumps(rd2)[:300]} {text[:200]!r}")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("mode", choices=["approved", "unassigned"])
    p.add_argument("--project", required=True)
    p.add_argument("--workspace")
    p.add_argument("--use")
    p.add_argument("--label", default="mcp")
    p.add_argument("--timeout", type=float, default=30)
    p.add_argument("--log", help="berth-mcp's stderr goes here (default: discarded)")
    argv = sys.argv[1:]
    cut = argv.index("--") if "--" in argv else len(argv)
    a, cmd = p.parse_args(argv[:cut]), argv[cut + 1:]
    if not cmd or (a.mode == "approved" and not a.workspace) or (a.mode == "unassigned" and not a.use):
        p.error("give --workspace (approved) or --use (unassigned), then -- CMD [ARGS...]")
    log = open(a.log, "ab") if a.log else subprocess.DEVNULL
    try:
        s = Session(cmd, a.timeout, log)
    except OSError as e:
        check(f"{a.label}: start berth-mcp", False, str(e))
        return 1
    try:
        (approved if a.mode == "approved" else unassigned)(s, a)
    except RuntimeError as e:
        check(f"{a.label}: the session went on", False, str(e))
    status = s.close()
    check(f"{a.label}: berth-mcp exits 0 when stdin closes", status == 0, f"exit {status}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
