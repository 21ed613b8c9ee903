# exit: 1
# Answers the handshake, then never reads again (and never exits on stdin close).
import json
import sys
import time
import _mcp

for line in sys.stdin.buffer:
    message = json.loads(line)
    if message.get("method") == "initialize":
        _mcp.answer(message)
    elif message.get("method") == "notifications/initialized":
        break
while True:
    time.sleep(60)
