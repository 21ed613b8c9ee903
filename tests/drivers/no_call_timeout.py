"""Broken: ignores the per-call timeout a caller gives `call_tool`
(rules timeouts.call.override and those that rely on a per-call bound)."""

import proxy


def drop_timeout(request):
    if request["step"] == "call_tool":
        request.pop("timeout_ms", None)
    return None


proxy.run(change_request=drop_timeout)
