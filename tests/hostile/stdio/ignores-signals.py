# exit: 0
# says: the rule allows 5 s
# A correct server that ignores SIGTERM, SIGINT and SIGHUP and stays up when stdin closes.
import signal
import time
import _mcp

for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
    signal.signal(sig, signal.SIG_IGN)
_mcp.serve()
while True:
    time.sleep(60)
