# exit: 5
# says: inconclusive
# Answers the handshake, then never reads again (and never exits on stdin close): its
# checks only run out of time, which is inconclusive (exit 5), not a failure.
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
