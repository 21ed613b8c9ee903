# exit: 1
# timeout: 5
# Answers initialize, then exits at once.
import os
import _mcp


def on_request(message):
    _mcp.answer(message)
    if message["method"] == "initialize":
        os._exit(0)
    return True


_mcp.serve(on_request)
