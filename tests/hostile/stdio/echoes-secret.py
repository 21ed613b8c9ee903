# exit: 1
# timeout: 5
# Puts its secret ($API_KEY) everywhere: server info, error messages, stderr, a stdout line.
import sys
import _mcp

secret = _mcp.SECRET
sys.stderr.write("loaded key " + secret + "\n")
sys.stderr.flush()


def on_request(message):
    method = message["method"]
    if method == "initialize":
        _mcp.result(message, _mcp.init_result(message, name="srv " + secret, version=secret))
    elif method == "ping":
        _mcp.write(b"debug: key=" + secret.encode() + b"\n")
        _mcp.result(message, {"key": secret})
    else:
        _mcp.error(message, 1, "bad key " + secret)
    return True


_mcp.serve(on_request)
