# exit: 1
# says: a line longer than 8388608 bytes
# Answers the first step with a line of 32 MiB (a string that never ends in time).
import _driver

CHUNK = b"x" * (1 << 20)


def answer(request):
    return b'{"id": %d, "ok": true, "value": "' % request["id"] + CHUNK * 32 + b'"}\n'


_driver.serve(answer)
