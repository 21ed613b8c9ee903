"""A client whose drop lets go of nothing (a destructor that closes no socket, the
connection kept alive by its reader): `drop` is answered here and never reaches the wrapped
client, whose connection lives on until the next scenario's `reset`. The scenarios that
look at what a drop closes fail; the rest pass."""

import proxy


def keep(request):
    if request["step"] == "drop":
        return {"id": request["id"], "ok": True, "value": True}
    return None


proxy.run(change_request=keep)
