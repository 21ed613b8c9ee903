"""Broken for reuse: over stdio, `close`, `drop` and `reset` forget the connection without
ending the server, and `reset` says it is clean: the runner must find the server still
running, replace this driver by a fresh one and note it in the scenario's result."""

import proxy

stdio = {}


def forget(request):
    if request["step"] == "connect":
        stdio["on"] = "stdio" in request["target"]
    if request["step"] in ("close", "drop") and stdio.get("on"):
        return {"id": request["id"], "ok": True, "value": "closed"}
    if request["step"] == "reset":
        return {"id": request["id"], "ok": True, "value": "clean"}
    return None


proxy.run(change_request=forget)
