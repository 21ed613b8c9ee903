# exit: 1
# timeout: 5
# Writes a 20 MB line that is not JSON before every answer.
import _mcp

big = b"x" * (20 << 20) + b"\n"


def on_request(message):
    if message["method"] != "initialize":
        _mcp.write(big)
    return False


_mcp.serve(on_request)
