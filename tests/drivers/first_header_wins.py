"""Broken: a header name given twice keeps its first value, as a header map filled with
insert-if-absent does (rule headers.replace)."""

import proxy


def keep_first(request):
    http = request.get("target", {}).get("http")
    if http and http.get("headers"):
        seen = set()
        kept = []
        for name, value in http["headers"]:
            if name.lower() not in seen:
                seen.add(name.lower())
                kept.append([name, value])
        http["headers"] = kept
    return None


proxy.run(change_request=keep_first)
