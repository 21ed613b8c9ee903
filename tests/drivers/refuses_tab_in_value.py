"""Broken: refuses a header value with a tab inside, which a field value may hold (RFC 9110
section 5.5; rule headers.validated)."""

import proxy


def refuse_tab(request):
    http = request.get("target", {}).get("http")
    for name, value in (http or {}).get("headers", []):
        if "\t" in value:
            return {
                "id": request["id"],
                "ok": False,
                "error": "invalid value for HTTP header '%s'" % name,
            }
    return None


proxy.run(change_request=refuse_tab)
