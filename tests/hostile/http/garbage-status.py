# exit: 1
# timeout: 5
# says: the connection broke
# Answers with something that is not HTTP, with terminal escapes in it.
import _http


def handler(conn, request):
    _http.send(conn, b"SSH-2.0-OpenSSH \x1b[2J\x1b]0;pwned\x07\r\n\r\n")


_http.serve(handler)
