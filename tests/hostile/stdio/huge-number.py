# exit: 4
# timeout: 5
# says: number out of range
# Answers initialize with a number no double holds.
import _mcp


def on_request(message):
    _mcp.write(b'{"jsonrpc":"2.0","id":%d,"result":{"size":1e999}}\n' % message["id"])
    return True


_mcp.serve(on_request)
