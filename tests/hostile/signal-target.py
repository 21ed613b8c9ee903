# A server to interrupt the validator on: it leaves a child that escaped with setsid and a
# daemonized grandchild, ignores SIGTERM, SIGINT and SIGHUP, answers the handshake and then
# never answers again.
import json
import os
import signal
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "stdio"))
import _mcp  # noqa: E402

for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
    signal.signal(sig, signal.SIG_IGN)
if os.fork() == 0:
    os.setsid()
    if os.fork() != 0:
        while True:
            time.sleep(60)
    while True:
        time.sleep(60)
for line in sys.stdin.buffer:
    message = json.loads(line)
    if message.get("method") == "initialize":
        _mcp.answer(message)
while True:
    time.sleep(60)
