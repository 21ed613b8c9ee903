"""Not broken: lists the tools before every call, as many real clients do (to check the
name or read the schema). Scripts answer that incidental `tools/list` with their defaults,
so only scenarios about `tools/list` itself may see it."""

import proxy

EXTRA = 1_000_000


def list_first(request):
    if request["step"] == "call_tool":
        return [{"id": request["id"] + EXTRA, "step": "list_tools"}, request]
    return None


def drop_extra(request, reply):
    return None if reply["id"] >= EXTRA else reply


proxy.run(change_request=list_first, change_reply=drop_extra)
