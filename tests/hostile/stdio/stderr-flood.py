# exit: 0
# timeout: 5
# A correct server that writes 30 MB on stderr at start.
import sys
import _mcp

chunk = b"E" * 65536 + b"\n"
for _ in range(480):
    sys.stderr.buffer.write(chunk)
sys.stderr.flush()
_mcp.serve()
