# exit: 4
# timeout: 5
# says: not an object
# Answers every request inside a JSON array.
import json
import _mcp


def on_request(message):
    _mcp.write((json.dumps([{"jsonrpc": "2.0", "id": message["id"], "result": _mcp.init_result(message)}]) + "\n").encode())
    return True


_mcp.serve(on_request)
