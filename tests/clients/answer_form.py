#!/usr/bin/env python3
"""Claude Code's `Elicitation` hook for the real-client script: plays the person at the form.

    answer_form.py RECORD WORKSPACE

Keeps the hook's input (the server's name, message and requested schema) in RECORD, and
accepts the form with WORKSPACE chosen, in the hook output Claude Code 2.1.197 reads
(`hookSpecificOutput` with `hookEventName: "Elicitation"`, `action`, `content`).

Python 3 standard library only.
"""

import json
import sys

record, workspace = sys.argv[1], sys.argv[2]
with open(record, "w") as f:
    f.write(sys.stdin.read())
print(
    json.dumps(
        {
            "hookSpecificOutput": {
                "hookEventName": "Elicitation",
                "action": "accept",
                "content": {"workspace": workspace},
            }
        }
    )
)
