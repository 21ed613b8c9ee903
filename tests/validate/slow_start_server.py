"""A correct server of the `initialize` era that takes SLOW_START_S seconds (default 6) to
answer its first `initialize`, as a server loading a large runtime does; it stays silent on
`server/discover` (a legacy server may; with DISCOVER_S set it answers -32601 that many
seconds late, as a slow server of that era does), answers `ping`, an empty `tools/list` and
-32601 to anything else, and ends when its input does. With SLOW_START_S=never it never
answers at all.
Run by the validator's tests: python3 slow_start_server.py"""

import json
import os
import sys
import time

REVISIONS = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"]
delay = os.environ.get("SLOW_START_S", "6")
discover_delay = os.environ.get("DISCOVER_S")
started = False


def reply(message, **body):
    print(json.dumps({"jsonrpc": "2.0", "id": message["id"], **body}), flush=True)


for line in sys.stdin:
    try:
        message = json.loads(line)
    except ValueError:
        print(json.dumps({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}}), flush=True)
        continue
    if delay == "never":
        continue
    if not isinstance(message, dict) or "id" not in message or "method" not in message:
        continue
    method = message["method"]
    if method == "initialize":
        if not started:
            time.sleep(float(delay))
            started = True
        offered = message.get("params", {}).get("protocolVersion")
        reply(message, result={
            "protocolVersion": offered if offered in REVISIONS else REVISIONS[-1],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "slow-start", "version": "1.0"},
        })
    elif method == "server/discover":
        if discover_delay is None:
            continue
        time.sleep(float(discover_delay))
        reply(message, error={"code": -32601, "message": "Method not found"})
    elif method == "ping":
        reply(message, result={})
    elif method == "tools/list":
        reply(message, result={"tools": []})
    else:
        reply(message, error={"code": -32601, "message": "Method not found"})
