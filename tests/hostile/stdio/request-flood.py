# exit: 1
# timeout: 5
# Answers the handshake, then floods the client with requests forever instead of answering.
import _mcp

flood = b"".join(b'{"jsonrpc":"2.0","id":"s%d","method":"ping"}\n' % i for i in range(256))

_mcp.flood_after_handshake(flood)
