# exit: 4
# timeout: 5
# args: --revision 2026-07-28
# says: more than 50000 JSON values
# never-says: does not speak
# Answers `server/discover` as a 2026-07-28 server would, padded with 200,000 small numbers
# (over the validator's value limit, under its line limit): the reader refuses the answer,
# so nothing is judged (never a pass, never "does not speak 2026-07-28").
import json
import _mcp

PAD = b"[" + b",".join([b"0"] * 200_000) + b"]"


def on_request(message):
    if message["method"] != "server/discover":
        return False
    reply = {
        "jsonrpc": "2.0",
        "id": message["id"],
        "result": {
            "resultType": "complete",
            "supportedVersions": ["2026-07-28"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "hostile", "version": "1.0"},
            "ttlMs": 0,
            "cacheScope": "public",
            "pad": "PAD",
        },
    }
    _mcp.write(json.dumps(reply).encode().replace(b'"PAD"', PAD) + b"\n")
    return True


_mcp.serve(on_request)
