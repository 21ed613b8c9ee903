# exit: 1
# Answers the handshake, then writes lines that are not JSON forever.
import _mcp

junk = b"starting worker... not json at all { [ \xff\xfe\n" * 1024


def on_request(message):
    if message["method"] == "initialize":
        return False
    while True:
        _mcp.write(junk)


_mcp.serve(on_request)
