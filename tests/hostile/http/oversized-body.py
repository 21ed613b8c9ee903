# exit: 1
# timeout: 5
# says: stopped reading at the 8388608-byte limit
# Answers everything with a 20 MB JSON body.
import _http

body = b'{"jsonrpc":"2.0","id":1,"result":{"pad":"' + b"x" * (20 << 20) + b'"}}'


def handler(conn, request):
    _http.respond(conn, "200 OK", body)


_http.serve(handler)
