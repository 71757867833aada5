"""Spawn -> first tool result of MCP stdio servers, interleaved, with the
official Python MCP SDK as the client (bench/mcp-first.sh runs it).

    mcp-first.py RUNS DIR NAME[:TOOL]=COMMAND...

For each run, for each server in turn: spawn it in DIR with this process's
environment, `initialize`, call TOOL (default `device_context`) once without
arguments, and time from before the spawn to holding the result. Prints each
server's median, p10, p90 and its ratio to the last server's median.
"""

import os
import statistics
import sys
import time

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

DEVNULL = open(os.devnull, "w")  # the servers' logs and banners


async def first_result(command: list[str], tool: str, cwd: str) -> float:
    params = StdioServerParameters(
        command=command[0], args=command[1:], env=dict(os.environ), cwd=cwd
    )
    start = time.perf_counter()
    async with stdio_client(params, errlog=DEVNULL) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            result = await session.call_tool(tool, {})
            took = time.perf_counter() - start
    if getattr(result, "is_error", None) or getattr(result, "isError", None):
        raise SystemExit(f"{command[0]}: {tool} failed: {result.content}")
    return took


async def main() -> None:
    runs, cwd, servers = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
    named = []
    for spec in servers:
        head, command = spec.split("=", 1)
        name, _, tool = head.partition(":")
        named.append((name, tool or "device_context", command.split()))
    times: dict[str, list[float]] = {name: [] for name, _, _ in named}
    for _ in range(3):  # warm-up: page cache, the daemon's lookup cache
        for _, tool, command in named:
            await first_result(command, tool, cwd)
    for _ in range(runs):
        for name, tool, command in named:
            times[name].append(await first_result(command, tool, cwd))
    floor = statistics.median(times[named[-1][0]])
    for name, _, _ in named:
        t = sorted(times[name])
        med = statistics.median(t)
        p10, p90 = t[len(t) // 10], t[len(t) * 9 // 10]
        print(
            f"{name}: median {med * 1000:.2f} ms (p10 {p10 * 1000:.2f}, p90 {p90 * 1000:.2f}), "
            f"{med / floor:.2f}x {named[-1][0]}"
        )


anyio.run(main)
