# A stdio MCP server for the roots relay's tests (standard library only).
#
#   relay_probe.py roots ID   answers initialize (its instructions are the
#                             client's capabilities as the server saw them),
#                             then asks roots/list with the raw JSON id ID and
#                             reports every answer and notification it gets as
#                             a probe/answer or probe/saw notification; a
#                             request probe/flood {"n": N} sends N roots/list
#                             requests and answers once all N are answered.
#   relay_probe.py echo CODE  copies stdin to stdout byte for byte, then exits CODE.
#   relay_probe.py die SIG    writes to stderr, then kills itself with SIG.
#   relay_probe.py deaf       prints one line and never reads; it ends by signal.
import json
import os
import signal
import sys
import threading
import time

out = sys.stdout.buffer
lock = threading.Lock()


def dumps(v):
    return json.dumps(v, separators=(",", ":"))


def send(text):
    with lock:
        out.write(text.encode() + b"\n")
        out.flush()


def roots(raw_id):
    flood = {"want": 0, "got": 0, "id": None}
    for line in sys.stdin.buffer:
        try:
            msg = json.loads(line)
        except ValueError:
            send(dumps({"jsonrpc": "2.0", "method": "probe/not-json"}))
            continue
        method = msg.get("method")
        if method == "initialize":
            caps = dumps(msg.get("params", {}).get("capabilities"))
            send(dumps({"jsonrpc": "2.0", "id": msg["id"], "result": {
                "protocolVersion": "2025-06-18", "capabilities": {},
                "serverInfo": {"name": "probe", "version": "1"}, "instructions": caps}}))
        elif method == "notifications/initialized":
            send('{"jsonrpc":"2.0","id":%s,"method":"roots/list"}' % raw_id)
        elif method == "probe/flood":
            flood.update(want=msg["params"]["n"], got=0, id=msg["id"])

            def ask(n):
                for i in range(n):
                    send('{"jsonrpc":"2.0","id":"f%d","method":"roots/list"}' % i)
            threading.Thread(target=ask, args=(flood["want"],), daemon=True).start()
        elif method:
            send(dumps({"jsonrpc": "2.0", "method": "probe/saw", "params": {"method": method}}))
        elif isinstance(msg.get("id"), str) and msg["id"].startswith("f"):
            flood["got"] += 1
            if flood["got"] == flood["want"]:
                send(dumps({"jsonrpc": "2.0", "id": flood["id"], "result": {"answered": flood["got"]}}))
        else:
            # The raw line, so the test sees the id's exact digits.
            send('{"jsonrpc":"2.0","method":"probe/answer","params":{"line":%s}}'
                 % json.dumps(line.decode().rstrip("\n")))


def echo(code):
    while True:
        chunk = os.read(0, 65536)
        if not chunk:
            break
        while chunk:
            chunk = chunk[os.write(1, chunk):]
    sys.exit(code)


mode = sys.argv[1]
if mode == "roots":
    roots(sys.argv[2])
elif mode == "echo":
    echo(int(sys.argv[2]))
elif mode == "die":
    sys.stderr.write("probe: dying by signal\n")
    sys.stderr.flush()
    os.kill(os.getpid(), int(sys.argv[2]))
elif mode == "deaf":
    send('{"jsonrpc":"2.0","method":"probe/deaf"}')
    while True:
        # Not a synchronisation: this server only waits to be ended.
        time.sleep(3600)
