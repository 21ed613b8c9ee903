"""Broken: starts every stdio server in a process group of its own, asked or not (rule
process.group.no-sigint: a Ctrl+C in the host's terminal must reach a server that shares
the host's group)."""

import proxy


def isolate(request):
    stdio = request.get("target", {}).get("stdio") if request["step"] == "connect" else None
    if stdio is not None:
        stdio["own_process_group"] = True
    return [request]


proxy.run(change_request=isolate)
