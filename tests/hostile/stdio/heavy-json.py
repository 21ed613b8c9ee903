# exit: 4
# says: more than 50000 JSON values
# Answers initialize with a 3 MB line of a million small numbers (hundreds of MB once parsed).
import json
import _mcp


def on_request(message):
    reply = {"jsonrpc": "2.0", "id": message["id"], "result": _mcp.init_result(message)}
    reply["result"]["pad"] = "PAD"
    line = json.dumps(reply).replace('"PAD"', "[" + ",".join(["0"] * 1_000_000) + "]")
    _mcp.write((line + "\n").encode())
    return True


_mcp.serve(on_request)
