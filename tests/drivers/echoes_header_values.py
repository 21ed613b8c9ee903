"""Broken: a failed call's error dumps the request's headers, values and all (rule
headers.sensitive)."""

import proxy

sent = {}


def remember(request):
    http = request.get("target", {}).get("http")
    if http:
        sent["headers"] = http.get("headers", [])
    return None


def dump_headers(request, reply):
    if request and request.get("step") != "connect" and not reply.get("ok"):
        dump = ", ".join("%s: %s" % (n, v) for n, v in sent.get("headers", []))
        reply["error"] = "%s (request headers: %s)" % (reply.get("error", ""), dump)
    return reply


proxy.run(change_request=remember, change_reply=dump_headers)
