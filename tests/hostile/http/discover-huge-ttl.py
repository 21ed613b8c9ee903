# exit: 4
# timeout: 5
# args: --revision 2026-07-28
# says: number out of range
# never-says: does not speak
# Answers the `server/discover` POST as a 2026-07-28 server would, but with a `ttlMs` of
# 1e400, a number no double holds: the answer is refused, so nothing is judged (never a
# pass, never "does not speak 2026-07-28").
import _http


def handler(conn, request):
    message = request.message()
    if request.method != "POST" or not isinstance(message, dict) or message.get("method") != "server/discover":
        return _http.answer(conn, request)
    _http.respond(
        conn,
        "200 OK",
        b'{"jsonrpc":"2.0","id":%d,"result":{"resultType":"complete",'
        b'"supportedVersions":["2026-07-28"],"capabilities":{"tools":{}},'
        b'"serverInfo":{"name":"hostile","version":"1.0"},'
        b'"ttlMs":1e400,"cacheScope":"public"}}' % message["id"],
    )


_http.serve(handler)
