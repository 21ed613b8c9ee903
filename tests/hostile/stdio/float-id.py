# exit: 4
# timeout: 5
# says: a response with id 1.0, not the one awaited
# Answers every request with its id as a float (1.0 for 1): not the id that was sent.
import _mcp


def on_request(message):
    _mcp.write(b'{"jsonrpc":"2.0","id":%d.0,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"f","version":"1"}}}\n' % message["id"])
    return True


_mcp.serve(on_request)
