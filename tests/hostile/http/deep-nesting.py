# exit: 1
# timeout: 5
# says: not JSON: recursion limit exceeded
# Answers initialize with a result nested deeper than any parser's limit.
import _http


def handler(conn, request):
    message = request.message() or {"id": 1}
    deep = b"[" * 1000 + b"]" * 1000
    _http.respond(conn, "200 OK", b'{"jsonrpc":"2.0","id":%d,"result":' % message.get("id", 1) + deep + b"}")


_http.serve(handler)
