"""A driver's skeleton for the hostile drivers: says hello, then answers each request line
with what `answer(request)` gives (a whole line, or bytes written as they are)."""

import json
import sys

HELLO = {"name": "hostile", "version": "0", "transports": ["stdio", "http"], "profile": "strict"}


def serve(answer, hello=None):
    out = sys.stdout.buffer
    out.write(json.dumps({"hello": hello or HELLO}).encode() + b"\n")
    out.flush()
    for line in sys.stdin:
        request = json.loads(line)
        if request.get("step") == "cancel":
            continue
        out.write(answer(request))
        out.flush()
