# exit: 1
# says: more than 50000 values
# Answers every step with an 8 MiB `[0,0,…]`: four million values, hundreds of megabytes
# once parsed, in a line under the length bound.
import json
import _driver

VALUES = b"[" + b"0," * (4 * 1024 * 1024 - 1024) + b"0]"


def answer(request):
    return b'{"id": %d, "ok": true, "value": ' % request["id"] + VALUES + b"}\n"


_driver.serve(answer)
