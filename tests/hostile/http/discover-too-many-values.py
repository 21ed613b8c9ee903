# exit: 4
# timeout: 5
# args: --revision 2026-07-28
# says: more than 50000 JSON values
# never-says: does not speak
# Answers the `server/discover` POST as a 2026-07-28 server would, padded with 200,000 small
# numbers (over the validator's value limit, under its body limit): the answer is refused,
# so nothing is judged (never a pass, never "does not speak 2026-07-28").
import json
import _http

PAD = b"[" + b",".join([b"0"] * 200_000) + b"]"


def handler(conn, request):
    message = request.message()
    if request.method != "POST" or not isinstance(message, dict) or message.get("method") != "server/discover":
        return _http.answer(conn, request)
    reply = {
        "jsonrpc": "2.0",
        "id": message["id"],
        "result": {
            "resultType": "complete",
            "supportedVersions": ["2026-07-28"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "hostile", "version": "1.0"},
            "ttlMs": 0,
            "cacheScope": "public",
            "pad": "PAD",
        },
    }
    _http.respond(conn, "200 OK", json.dumps(reply).encode().replace(b'"PAD"', PAD))


_http.serve(handler)
