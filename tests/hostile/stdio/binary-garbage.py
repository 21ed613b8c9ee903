# exit: 1
# timeout: 5
# Writes NUL bytes, invalid UTF-8 and controls on stdout between correct answers.
import _mcp


def on_request(message):
    _mcp.write(b"\x00\x01\x02\xff\xfe\xc3\x28\x1b[5m\x07\x08\x7f\n")
    return False


_mcp.serve(on_request)
