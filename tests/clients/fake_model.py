#!/usr/bin/env python3
"""A fake model API for the real-client conformance script, on 127.0.0.1 only.

It speaks just enough of two wire formats for one agent turn: Anthropic's
Messages API (Claude Code, and the Copilot CLI in its BYOK mode) and OpenAI's
Responses API (Codex), streaming or not, as the client asks. A request that
offers berth's `device_context` tool and carries no result of it yet gets a
call of that tool; every other request gets a short final text. Every request
body is kept in the log folder, so the script can check what the model saw.

    fake_model.py serve LOG_DIR PORT_FILE [CALLS_FILE]
    fake_model.py saw LOG_DIR NEEDLE     # where NEEDLE reached the model
    fake_model.py results LOG_DIR        # what the scripted calls' results said
    fake_model.py tools LOG_DIR          # the tools the first request offered

With CALLS_FILE (a JSON list of {"name": TOOL, "input": ARGUMENTS}), the model
makes those calls instead, one per request and in order, each once the client
offers that tool, then answers with the final text; ARGUMENTS is the object a
Messages API tool takes, or for the Responses API the object whose JSON is the
call's arguments, or a string: the input of a freeform tool (a Responses API
`custom_tool_call`, such as Codex's code-mode `exec`, whose input is
JavaScript source). The Responses API's tools are read from the request's
`tools` and from its `additional_tools` input items (where Codex puts them
for its bundled models), at top level or in a namespace.

Python 3 standard library only.
"""

import json
import os
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

CALL_ID = "toolu_berth_device_context"
SCRIPTED_ID = "toolu_berth_scripted_"
FINAL_TEXT = "berth conformance: done."


def offered_tools(body):
    """Every tool the request offers, as (tool, namespace): from `tools`, and from the
    `additional_tools` input items in which Codex offers its bundled models' tools."""
    lists = [body.get("tools") or []]
    for item in body.get("input", []) if isinstance(body.get("input"), list) else []:
        if isinstance(item, dict) and item.get("type") == "additional_tools":
            lists.append(item.get("tools") or [])
    for tools in lists:
        for tool in tools:
            if not isinstance(tool, dict):
                continue
            if tool.get("type") != "namespace":
                yield tool, None
                continue
            for inner in tool.get("tools") or []:
                if isinstance(inner, dict):
                    yield inner, tool.get("name")


def tool_name(body):
    """How the client offers berth's device_context tool: (name, namespace).
    Codex groups an MCP server's tools in a namespace named after it."""
    for tool, namespace in offered_tools(body):
        name = tool.get("name")
        if namespace is None and isinstance(name, str) and name.endswith("device_context"):
            return name, None
        if namespace is not None and name == "device_context":
            return "device_context", namespace
    return None


def tool_results(body):
    """The texts of every result of our call in the request, whatever the format."""
    out = []
    for m in body.get("messages", []) or []:  # Anthropic
        content = m.get("content") if isinstance(m, dict) else None
        for block in content if isinstance(content, list) else []:
            if block.get("type") == "tool_result" and block.get("tool_use_id") == CALL_ID:
                out.append(block.get("content"))
    for item in body.get("input", []) if isinstance(body.get("input"), list) else []:
        if isinstance(item, dict) and item.get("type") == "function_call_output" and item.get("call_id") == CALL_ID:
            out.append(item.get("output"))
    return [r if isinstance(r, str) else json.dumps(r) for r in out]


def offered(body, wanted):
    """Whether the request offers a tool named `wanted`, at top level or in a namespace."""
    return any(tool.get("name") == wanted for tool, _ in offered_tools(body))


def scripted_results(body):
    """How many results of scripted calls the request carries."""
    ids = set()
    for m in body.get("messages", []) or []:
        content = m.get("content") if isinstance(m, dict) else None
        for block in content if isinstance(content, list) else []:
            if block.get("type") == "tool_result" and str(block.get("tool_use_id", "")).startswith(SCRIPTED_ID):
                ids.add(block["tool_use_id"])
    for item in body.get("input", []) if isinstance(body.get("input"), list) else []:
        if isinstance(item, dict) and item.get("type") in ("function_call_output", "custom_tool_call_output") \
                and str(item.get("call_id", "")).startswith(SCRIPTED_ID):
            ids.add(item["call_id"])
    return len(ids)


def next_scripted(body, calls):
    """The next scripted call as (name, input, id), or None when all are answered."""
    n = scripted_results(body)
    if n >= len(calls) or not offered(body, calls[n]["name"]):
        return None
    return calls[n]["name"], calls[n]["input"], f"{SCRIPTED_ID}{n}"


def anthropic(body, call):
    model = body.get("model", "fake")
    if call:
        block = {"type": "tool_use", "id": call[2] if len(call) > 2 else CALL_ID, "name": call[0],
                 "input": call[1] if len(call) > 2 else {}}
        stop = "tool_use"
    else:
        block = {"type": "text", "text": FINAL_TEXT}
        stop = "end_turn"
    usage = {"input_tokens": 10, "output_tokens": 5}
    message = {"id": "msg_fake", "type": "message", "role": "assistant", "model": model,
               "content": [block], "stop_reason": stop, "stop_sequence": None, "usage": usage}
    if not body.get("stream"):
        return "application/json", json.dumps(message).encode()
    start = dict(message, content=[], stop_reason=None)
    if call:
        empty = dict(block, input={})
        delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
    else:
        empty, delta = dict(block, text=""), {"type": "text_delta", "text": FINAL_TEXT}
    events = [
        ("message_start", {"type": "message_start", "message": start}),
        ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": empty}),
        ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        ("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                           "usage": {"output_tokens": 5}}),
        ("message_stop", {"type": "message_stop"}),
    ]
    return "text/event-stream", sse(events)


def responses(body, call):
    if call and len(call) > 2 and isinstance(call[1], str):
        item = {"type": "custom_tool_call", "id": "ctc_fake", "call_id": call[2], "name": call[0],
                "input": call[1], "status": "completed"}
    elif call and len(call) > 2:
        item = {"type": "function_call", "id": "fc_fake", "call_id": call[2], "name": call[0],
                "arguments": json.dumps(call[1]), "status": "completed"}
    elif call:
        item = {"type": "function_call", "id": "fc_fake", "call_id": CALL_ID, "name": call[0],
                "arguments": "{}", "status": "completed"}
        if call[1]:
            item["namespace"] = call[1]
    else:
        item = {"type": "message", "id": "msg_fake", "role": "assistant", "status": "completed",
                "content": [{"type": "output_text", "text": FINAL_TEXT, "annotations": []}]}
    usage = {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 5,
             "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 15}
    response = {"id": "resp_fake", "object": "response", "status": "completed",
                "model": body.get("model", "fake"), "output": [item], "usage": usage}
    if not body.get("stream"):
        return "application/json", json.dumps(response).encode()
    events = [
        ("response.created", {"type": "response.created",
                              "response": dict(response, status="in_progress", output=[])}),
        ("response.output_item.added", {"type": "response.output_item.added", "output_index": 0, "item": item}),
        ("response.output_item.done", {"type": "response.output_item.done", "output_index": 0, "item": item}),
        ("response.completed", {"type": "response.completed", "response": response}),
    ]
    return "text/event-stream", sse(events)


def sse(events):
    return b"".join(f"event: {e}\ndata: {json.dumps(d)}\n\n".encode() for e, d in events)


class Handler(BaseHTTPRequestHandler):
    log_dir = "."
    calls = None
    lock = threading.Lock()
    count = 0

    def log_message(self, *args):
        pass

    def record(self, body):
        with Handler.lock:
            Handler.count += 1
            n = Handler.count
        with open(os.path.join(self.log_dir, f"request-{n:03}.json"), "w") as f:
            json.dump({"method": self.command, "path": self.path, "body": body}, f)

    def answer(self, status, ctype, data):
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        self.record(None)
        if self.path.split("?")[0].rstrip("/").endswith("/models"):
            self.answer(200, "application/json", json.dumps({"object": "list", "data": []}).encode())
        else:
            self.answer(404, "application/json", b'{"error":"not found"}')

    def do_POST(self):
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = {"unparsed": raw.decode("utf-8", "replace")}
        self.record(body)
        path = self.path.split("?")[0]
        if Handler.calls is not None:
            call = next_scripted(body, Handler.calls)
        else:
            call = tool_name(body) if not tool_results(body) else None
        if path.endswith("/messages"):
            self.answer(200, *anthropic(body, call))
        elif path.endswith("/responses"):
            self.answer(200, *responses(body, call))
        elif path.endswith("/count_tokens"):
            self.answer(200, "application/json", b'{"input_tokens": 10}')
        else:
            self.answer(404, "application/json", b'{"error":"not found"}')


def serve(log_dir, port_file, calls_file=None):
    Handler.log_dir = log_dir
    if calls_file:
        with open(calls_file) as f:
            Handler.calls = json.load(f)
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    with open(port_file + ".tmp", "w") as f:
        f.write(str(server.server_address[1]))
    os.rename(port_file + ".tmp", port_file)
    server.serve_forever()


def saw(log_dir, needle):
    """Where the needle reached the model, on the first line: `result` when a
    result of the device_context call holds it, `called` when the call's
    result came back without it, `nothing` when the client never sent a
    result back; ` elsewhere` is added when another part of a request (such
    as a session-start hook's context) holds it. The second line is the start
    of the result the model got."""
    results, elsewhere = [], False
    for name in sorted(os.listdir(log_dir)):
        with open(os.path.join(log_dir, name)) as f:
            body = json.load(f).get("body")
        if not isinstance(body, dict):
            continue
        found = tool_results(body)
        results += found
        rest = json.dumps({k: v for k, v in body.items() if k not in ("messages", "input")}, ensure_ascii=False)
        turns = [m for m in (body.get("messages") or []) + (body.get("input") if isinstance(body.get("input"), list) else [])
                 if not (isinstance(m, dict) and (m.get("type") == "function_call_output"
                                                  or any(isinstance(b, dict) and b.get("type") == "tool_result"
                                                         for b in (m.get("content") if isinstance(m.get("content"), list) else []))))]
        if needle in rest or needle in json.dumps(turns, ensure_ascii=False):
            elsewhere = True
    verdict = "result" if any(needle in r for r in results) else "called" if results else "nothing"
    print(verdict + (" elsewhere" if elsewhere else ""))
    print(" ".join((results[0] if results else "").split())[:160])


def results(log_dir):
    """The result of each scripted call, one JSON string per line, from the last request
    that carries them."""
    last = []
    for name in sorted(os.listdir(log_dir)):
        with open(os.path.join(log_dir, name)) as f:
            body = json.load(f).get("body")
        if not isinstance(body, dict):
            continue
        found = []
        for m in body.get("messages", []) or []:
            content = m.get("content") if isinstance(m, dict) else None
            for block in content if isinstance(content, list) else []:
                if block.get("type") == "tool_result" and str(block.get("tool_use_id", "")).startswith(SCRIPTED_ID):
                    found.append(block.get("content"))
        for item in body.get("input", []) if isinstance(body.get("input"), list) else []:
            if isinstance(item, dict) and item.get("type") in ("function_call_output", "custom_tool_call_output") \
                    and str(item.get("call_id", "")).startswith(SCRIPTED_ID):
                found.append(item.get("output"))
        if found:
            last = found
    for r in last:
        print(json.dumps(r if isinstance(r, str) else json.dumps(r)))


def tools(log_dir):
    """The tools the first model request offered, one `TYPE NAME` a line; a tool in a
    namespace is named NAMESPACE.NAME."""
    for name in sorted(os.listdir(log_dir)):
        with open(os.path.join(log_dir, name)) as f:
            body = json.load(f).get("body")
        if not isinstance(body, dict):
            continue
        for tool, namespace in offered_tools(body):
            print(tool.get("type"), f"{namespace}.{tool.get('name')}" if namespace else tool.get("name"))
        return


if __name__ == "__main__":
    if len(sys.argv) in (4, 5) and sys.argv[1] == "serve":
        serve(*sys.argv[2:])
    elif len(sys.argv) == 4 and sys.argv[1] == "saw":
        saw(sys.argv[2], sys.argv[3])
    elif len(sys.argv) == 3 and sys.argv[1] == "results":
        results(sys.argv[2])
    elif len(sys.argv) == 3 and sys.argv[1] == "tools":
        tools(sys.argv[2])
    else:
        sys.exit(__doc__)
