# exit: 1
# timeout: 5
# says: the body broke off
# Answers with chunked encoding whose chunk sizes are not hexadecimal.
import _http


def handler(conn, request):
    _http.send(conn, b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{\"jso\r\nzz\r\nnope\r\n0\r\n\r\n")


_http.serve(handler)
