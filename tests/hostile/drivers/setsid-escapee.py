# exit: 1
# A driver whose child leaves the process group with setsid and sleeps forever, and whose
# grandchild daemonizes (double fork); then it fails every step.
import json
import os
import time
import _driver

if os.fork() == 0:
    os.setsid()
    while True:
        time.sleep(60)
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        while True:
            time.sleep(60)
    os._exit(0)


def answer(request):
    return json.dumps({"id": request["id"], "ok": False, "error": "no"}).encode() + b"\n"


_driver.serve(answer)
