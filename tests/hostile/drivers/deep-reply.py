# exit: 1
# says: deeper than 1000 levels
# Answers every step with arrays nested a million deep.
import _driver

DEEP = b"[" * 1_000_000 + b"]" * 1_000_000


def answer(request):
    return b'{"id": %d, "ok": true, "value": ' % request["id"] + DEEP + b"}\n"


_driver.serve(answer)
