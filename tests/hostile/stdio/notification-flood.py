# exit: 1
# Answers the handshake, then floods notifications forever instead of answering anything.
import _mcp

flood = b'{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}\n' * 512


def on_request(message):
    if message["method"] == "initialize":
        return False
    while True:
        _mcp.write(flood)


_mcp.serve(on_request)
