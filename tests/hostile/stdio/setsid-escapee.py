# exit: 0
# timeout: 5
# A correct server whose child leaves the process group with setsid and sleeps forever.
import os
import time
import _mcp

if os.fork() == 0:
    os.setsid()
    while True:
        time.sleep(60)
_mcp.serve()
