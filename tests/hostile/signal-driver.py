# A driver to interrupt `run --client` on while it is starting processes that leave its
# group: from its hello on, each of its STORMERS children (in its group) daemonizes a child
# every few milliseconds (a fork that calls setsid, then forks a grandchild that sleeps on,
# and exits, so the grandchild is handed to the nearest subreaper), up to STORM each; it
# never answers a step. A signal that arrives during the storm finds forks, setsids and
# hand-overs under way.
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "drivers"))
import _driver  # noqa: E402

STORM = 60
STORMERS = 4


def storm():
    for _ in range(STORM):
        child = os.fork()
        if child == 0:
            os.setsid()
            if os.fork() == 0:
                while True:
                    time.sleep(60)
            os._exit(0)
        os.waitpid(child, 0)
        time.sleep(0.002)


for _ in range(STORMERS):
    if os.fork() == 0:
        sys.stdin.close()
        storm()
        while True:
            time.sleep(60)
_driver.serve(lambda request: b"")
