"""Broken: says hello and exits at once."""

import json

print(json.dumps({"hello": {"name": "exits", "version": "0", "transports": ["stdio", "http"], "profile": "strict"}}), flush=True)
