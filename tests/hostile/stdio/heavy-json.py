# exit: 4
# timeout: 5
# says: more than 50000 JSON values
# Answers initialize with a 400 kB line of 200,000 small numbers (tens of MB once parsed).
import json
import _mcp

PAD = b"[" + b",".join([b"0"] * 200_000) + b"]"


def on_request(message):
    reply = {"jsonrpc": "2.0", "id": message["id"], "result": _mcp.init_result(message)}
    reply["result"]["pad"] = "PAD"
    _mcp.write(json.dumps(reply).encode().replace(b'"PAD"', PAD) + b"\n")
    return True


_mcp.serve(on_request)
