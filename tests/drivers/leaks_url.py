"""Broken: quotes the full URL it was given, key and all, in every error (rules
redaction.origin-only, redaction.key-like-parts, redaction.credentials)."""

import proxy

url = {}


def remember(request):
    target = request.get("target", {})
    if "http" in target:
        url["value"] = target["http"]["url"]
    return None


def quote_url(request, reply):
    if not reply.get("ok") and "value" in url:
        reply["error"] = "%s (while talking to %s)" % (reply.get("error", ""), url["value"])
    return reply


proxy.run(change_request=remember, change_reply=quote_url)
