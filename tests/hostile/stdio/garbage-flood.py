# exit: 1
# timeout: 5
# Answers the handshake, then writes lines that are not JSON forever.
import _mcp

junk = b"starting worker... not json at all { [ \xff\xfe\n" * 1024

_mcp.flood_after_handshake(junk)
