# exit: 1
# timeout: 5
# Answers the handshake, then floods notifications forever instead of answering anything.
import _mcp

flood = b'{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}\n' * 512

_mcp.flood_after_handshake(flood)
