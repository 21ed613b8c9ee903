"""Broken: the handshake ends once `notifications/initialized` is sent, whatever status the
server answers it with, as a client that never reads a notification's acknowledgement does
(rule lifecycle.initialized.undeliverable)."""

import proxy


def connected_anyway(request, reply):
    error = reply.get("error")
    if request and request.get("step") == "connect" and error and "notifications/initialized" in error:
        return {"id": reply["id"], "ok": True, "value": {"protocolVersion": "2025-11-25"}}
    return reply


proxy.run(change_reply=connected_anyway)
