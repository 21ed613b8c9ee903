# exit: 1
# timeout: 5
# says: message head is too large
# Answers with a 2 MB header.
import _http


def handler(conn, request):
    _http.send(conn, b"HTTP/1.1 200 OK\r\nX-Pad: " + b"p" * (2 << 20) + b"\r\nContent-Length: 0\r\n\r\n")


_http.serve(handler)
