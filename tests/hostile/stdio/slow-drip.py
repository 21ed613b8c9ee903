# exit: 4
# Answers initialize one byte every 20 ms: the answer is never whole within the bound.
import json
import time
import _mcp


def on_request(message):
    line = (json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": _mcp.init_result(message)}) + "\n").encode()
    for byte in line:
        _mcp.write(bytes([byte]))
        time.sleep(0.02)
    return True


_mcp.serve(on_request)
