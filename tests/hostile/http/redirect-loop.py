# exit: 1
# timeout: 5
# says: 307 Temporary Redirect
# Redirects every request to itself.
import _http


def handler(conn, request):
    _http.respond(conn, "307 Temporary Redirect", b"", [("Location", request.path)])


_http.serve(handler)
