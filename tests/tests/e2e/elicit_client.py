"""An MCP client on the official Python SDK that shows forms, for the e2e tests of berth's
question in the client's own form (tests/tests/e2e/elicit_python.rs runs it).

    elicit_client.py PLAN_JSON

PLAN_JSON names the server (`command`, `cwd`; the server gets this process's environment),
the protocol era (`mode`: "legacy" for the initialize handshake, "2026-07-28" for the
modern era), whether the client declares forms (`forms`), the person's scripted answers
(`answers`, each an ElicitResult as JSON; a cancel once they run out), the tools to call in
turn (`calls`), and `tamper` for the modern era's request-state checks. It prints one JSON
object: every form it was shown (`asked`), each call's result (`results`), and with
`tamper` what the server said to each doctored retry (`tamper`).
"""

import json
import os
import sys

import anyio
from mcp import StdioServerParameters
from mcp.client.client import Client
from mcp.shared.exceptions import MCPError
import mcp.types as types


def result_json(result) -> dict:
    text = "".join(getattr(c, "text", "") for c in (result.content or []))
    return {
        "structured": result.structured_content,
        "text": text,
        "is_error": bool(result.is_error),
    }


async def main() -> None:
    plan = json.loads(sys.argv[1])
    answers = list(plan.get("answers", []))
    asked: list[dict] = []

    async def person(context, params):
        asked.append(
            {
                "message": params.message,
                "schema": getattr(params, "requested_schema", None),
            }
        )
        answer = answers.pop(0) if answers else {"action": "cancel"}
        return types.ElicitResult(**answer)

    server = StdioServerParameters(
        command=plan["command"], args=[], env=dict(os.environ), cwd=plan["cwd"]
    )
    out: dict = {"asked": asked, "results": []}
    async with Client(
        server,
        mode=plan.get("mode", "legacy"),
        elicitation_callback=person if plan.get("forms", True) else None,
    ) as client:
        out["protocol"] = client.session.protocol_version
        if plan.get("tamper"):
            out["tamper"] = await tamper(client.session)
        for tool in plan.get("calls", []):
            out["results"].append(result_json(await client.call_tool(tool, {})))
    for a in asked:
        if a["schema"] is not None and not isinstance(a["schema"], dict):
            a["schema"] = a["schema"].model_dump(mode="json", by_alias=True, exclude_none=True)
    print(json.dumps(out))


async def tamper(session) -> dict:
    """The modern era's request state, doctored: changed, moved to another call, replayed."""
    first = await session.call_tool("device_context", {}, allow_input_required=True)
    if not isinstance(first, types.InputRequiredResult):
        return {"error": "the first call did not ask"}
    state = first.request_state
    key = next(iter(first.input_requests or {"berth-workspace": None}))
    responses = {key: {"action": "accept", "content": {"workspace": "work"}}}

    async def retry(tool: str, state: str):
        try:
            r = await session.call_tool(
                tool,
                {},
                input_responses=responses,
                request_state=state,
                allow_input_required=True,
            )
        except MCPError as e:
            return {"refused": str(e)}
        if isinstance(r, types.InputRequiredResult):
            return {"asked_again": True}
        return result_json(r)

    i = len(state) - 3
    doctored = state[:i] + ("B" if state[i] == "A" else "A") + state[i + 1 :]
    said = {"key": key}
    said["changed"] = await retry("device_context", doctored)
    said["other_call"] = await retry("list_workspaces", state)
    said["written_before_good"] = os.path.exists(os.path.join(os.getcwd(), ".berth"))
    said["good"] = await retry("device_context", state)
    said["replayed"] = await retry("device_context", state)
    return said


anyio.run(main)
