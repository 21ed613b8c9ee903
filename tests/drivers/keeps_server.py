"""Broken: over stdio, `close` and `drop` forget the connection without ending the
server (rules process.drop.kills-command, process.group.kills-group, process.exited.closed)."""

import proxy

stdio = {}


def forget(request):
    if request["step"] == "connect":
        stdio["on"] = "stdio" in request["target"]
    if request["step"] in ("close", "drop") and stdio.get("on"):
        return {"id": request["id"], "ok": True, "value": "closed"}
    return None


proxy.run(change_request=forget)
