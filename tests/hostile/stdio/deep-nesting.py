# exit: 4
# timeout: 5
# says: recursion limit exceeded
# Answers initialize with a result nested deeper than any parser's limit.
import _mcp


def on_request(message):
    deep = b"[" * 1000 + b"]" * 1000
    _mcp.write(b'{"jsonrpc":"2.0","id":%d,"result":{"protocolVersion":"2025-11-25","x":' % message["id"] + deep + b"}}\n")
    return True


_mcp.serve(on_request)
