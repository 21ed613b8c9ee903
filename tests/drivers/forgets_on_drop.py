"""A client that cannot drop a connection without closing it (JavaScript has no destructor):
`drop` only forgets the connection, and the hello leaves out the capability `drop`. The
scenarios that look at what a drop ended are not applicable to it; the rest pass."""

import proxy


def without_drop(message):
    hello = message["hello"]
    hello["capabilities"] = [c for c in hello.get("capabilities", []) if c != "drop"]
    return message


def forget(request):
    if request["step"] == "drop":
        return {"id": request["id"], "ok": True, "value": True}
    return None


proxy.run(change_request=forget, change_hello=without_drop)
