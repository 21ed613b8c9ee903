# exit: 1
# says: client: xxxxxxxxxx
# Names itself with 4 MiB of text (every scenario's result carries the name), then fails
# every step with an error text as large.
import json
import _driver

BIG = "x" * (4 << 20)


def answer(request):
    return json.dumps({"id": request["id"], "ok": False, "error": BIG}).encode() + b"\n"


_driver.serve(answer, dict(_driver.HELLO, name=BIG))
