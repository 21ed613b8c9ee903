# exit: 4
# timeout: 5
# says: over the 4194304-byte limit
# Writes one line that never ends.
import _mcp

chunk = b"a" * 65536
while True:
    _mcp.write(chunk)
