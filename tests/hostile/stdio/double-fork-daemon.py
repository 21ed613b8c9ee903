# exit: 0
# timeout: 5
# A correct server that daemonizes a grandchild (fork, setsid, fork, the middle one exits).
import os
import time
import _mcp

if os.fork() == 0:
    os.setsid()
    if os.fork() != 0:
        os._exit(0)
    while True:
        time.sleep(60)
_mcp.serve()
