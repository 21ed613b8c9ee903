"""A server of the `initialize` era that stays silent on any method it does not know (the
2026-07-28 compatibility matrix allows a legacy server to "stay silent"): it answers
`initialize` and `ping` only. Run by the validator's tests: python3 silent_legacy_server.py"""

import json
import sys

for line in sys.stdin:
    message = json.loads(line)
    if message.get("method") == "initialize":
        result = {"protocolVersion": "2025-11-25", "capabilities": {}, "serverInfo": {"name": "silent", "version": "1"}}
    elif message.get("method") == "ping":
        result = {}
    else:
        continue
    print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}), flush=True)
