"""Broken: says hello, then answers every request with a line that is not JSON."""

import json
import sys

print(json.dumps({"hello": {"name": "garbage", "version": "0", "transports": ["stdio", "http"], "profile": "strict"}}), flush=True)
for line in sys.stdin:
    print("OK!! connected <3", flush=True)
