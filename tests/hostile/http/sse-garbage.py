# exit: 1
# Answers the handshake, then SSE frames whose data is not JSON, forever.
import _http

frames = b"data: \x1b[2Jnot json {{{ \xff\n\n" * 512


def handler(conn, request):
    message = request.message()
    if request.method != "POST" or not isinstance(message, dict) or message.get("method") == "initialize" or "id" not in message:
        return _http.answer(conn, request)
    _http.send(conn, b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n")
    while True:
        _http.send(conn, frames)


_http.serve(handler)
