# exit: 0
# timeout: 5
# A correct server that leaves a child in its process group holding stdout when it exits.
import os
import time
import _mcp

if os.fork() == 0:
    while True:
        time.sleep(60)
_mcp.serve()
