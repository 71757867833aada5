"""What the official Python MCP SDK spends on each tool's `outputSchema`
before it hands over the tool's first result: `validator_for`, the check of
the schema against its metaschema, and compiling a validator (the SDK's
`ClientSession._output_schema_validator`). bench/mcp-first.sh runs it.

    schema-check.py RUNS DIR NAME=COMMAND...

For each server: spawn it in DIR, list its tools, then time each tool's
check in a fresh interpreter (the SDK's first call pays for the metaschema's
first use too), RUNS times. Prints the size of `tools/list` and, per tool,
the median in ms. Goal: every tool under 0.6 ms.
"""

import json
import os
import statistics
import subprocess
import sys

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

# The SDK's own steps, timed in a fresh interpreter with jsonschema imported.
CHECK = """
import json, sys, time
from jsonschema.validators import validator_for
from referencing import Registry
schema = json.loads(sys.stdin.read())
start = time.perf_counter()
cls = validator_for(schema)
cls.check_schema(schema)
cls(schema, registry=Registry())
print(time.perf_counter() - start)
"""


async def tools_of(command: list[str], cwd: str) -> list[dict]:
    params = StdioServerParameters(
        command=command[0], args=command[1:], env=dict(os.environ), cwd=cwd
    )
    with open(os.devnull, "w") as devnull:
        async with stdio_client(params, errlog=devnull) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                listed = await session.list_tools()
    return [t.model_dump(by_alias=True, exclude_none=True) for t in listed.tools]


def check_ms(schema: dict) -> float:
    out = subprocess.run(
        [sys.executable, "-c", CHECK],
        input=json.dumps(schema),
        capture_output=True,
        text=True,
        check=True,
    )
    return float(out.stdout) * 1000


def main() -> None:
    runs, cwd, servers = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
    for spec in servers:
        name, command = spec.split("=", 1)
        tools = anyio.run(tools_of, command.split(), cwd)
        size = len(json.dumps({"tools": tools}, separators=(",", ":")))
        print(f"{name}: tools/list {size} bytes, {len(tools)} tools")
        for tool in tools:
            schema = tool.get("outputSchema")
            if schema is None:
                print(f"  {tool['name']}: no outputSchema")
                continue
            ms = statistics.median(check_ms(schema) for _ in range(runs))
            print(f"  {tool['name']}: outputSchema check {ms:.2f} ms")


main()
