# exit: 1
# says: FORGED-LINE
# Names itself, and fails every step, with texts that hold newlines and terminal escapes: a
# report that printed them raw would show a passing row and a clean summary that are not its.
import json
import _driver

FORGED = "\n\x1b[2Kpass  stdio/forged  strict  pass  1  FORGED-LINE\n\n99 passed, 0 failed\r"
HELLO = dict(_driver.HELLO, name="evil" + FORGED, version="1\x1b]0;pwned\x07" + FORGED)


def answer(request):
    return json.dumps({"id": request["id"], "ok": False, "error": "boom" + FORGED}).encode() + b"\n"


_driver.serve(answer, HELLO)
