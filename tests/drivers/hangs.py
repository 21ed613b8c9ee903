"""Broken: says hello, then never answers anything."""

import json
import sys
import time

print(json.dumps({"hello": {"name": "hangs", "version": "0", "transports": ["stdio", "http"], "profile": "strict"}}), flush=True)
while True:
    time.sleep(3600)
