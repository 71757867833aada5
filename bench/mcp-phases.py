"""Where an MCP server's first tool result goes, phase by phase, two ways:
through the official Python SDK (spawn, `initialize`, `tools/list`,
`call_tool`), and from a bare script that writes the same JSON-RPC lines to
the server's stdin and reads each answer (the server's own time, without the
SDK's work on what it answers). Servers alternate, run by run.

    mcp-phases.py RUNS NAME=COMMAND...    # in the session's directory

Run it with the venv bench/mcp-first.sh creates, in the environment that
script sets up (a warm daemon, an approved project), e.g. for berth-mcp and
the floor. Prints each server's median per phase, in ms.
"""

import json
import os
import statistics
import subprocess
import sys
import time

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

DEVNULL = open(os.devnull, "w")
BARE = [
    {"jsonrpc": "2.0", "id": 1, "method": "initialize",
     "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": {"name": "mcp-phases", "version": "1"}}},
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
    {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
     "params": {"name": "device_context", "arguments": {}}},
]


async def with_sdk(command: list[str]) -> list[float]:
    params = StdioServerParameters(
        command=command[0], args=command[1:], env=dict(os.environ), cwd=os.getcwd()
    )
    start = time.perf_counter()
    marks = []
    async with stdio_client(params, errlog=DEVNULL) as (read, write):
        async with ClientSession(read, write) as session:
            marks.append(time.perf_counter())
            await session.initialize()
            marks.append(time.perf_counter())
            await session.list_tools()
            marks.append(time.perf_counter())
            await session.call_tool("device_context", {})
            marks.append(time.perf_counter())
    points = [start] + marks
    return [(b - a) * 1000 for a, b in zip(points, points[1:])]


def bare(command: list[str]) -> list[float]:
    start = time.perf_counter()
    proc = subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=DEVNULL
    )
    marks = [start]
    for message in BARE:
        proc.stdin.write((json.dumps(message) + "\n").encode())
        proc.stdin.flush()
        if "id" in message:
            proc.stdout.readline()
            marks.append(time.perf_counter())
    proc.stdin.close()
    proc.wait()
    return [(b - a) * 1000 for a, b in zip(marks, marks[1:])]


async def main() -> None:
    runs, servers = int(sys.argv[1]), [s.split("=", 1) for s in sys.argv[2:]]
    sdk = {name: [] for name, _ in servers}
    raw = {name: [] for name, _ in servers}
    for i in range(runs + 3):  # three warm-up rounds
        for name, command in servers:
            a, b = await with_sdk(command.split()), bare(command.split())
            if i >= 3:
                sdk[name].append(a)
                raw[name].append(b)
    for name, _ in servers:
        med = lambda rows: [statistics.median(col) for col in zip(*rows)]
        s, r = med(sdk[name]), med(raw[name])
        print(f"{name}: SDK spawn {s[0]:.2f}, initialize {s[1]:.2f}, tools/list {s[2]:.2f}, "
              f"tools/call {s[3]:.2f}, total {sum(s):.2f} ms; bare initialize (from spawn) "
              f"{r[0]:.2f}, tools/list {r[1]:.2f}, tools/call {r[2]:.2f}, total {sum(r):.2f} ms")


anyio.run(main)
