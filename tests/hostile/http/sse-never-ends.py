# exit: 1
# Answers the handshake, then answers every request with an SSE stream of notifications
# that never ends and never holds the answer.
import _http

event = b'event: message\ndata: {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}\n\n' * 256


def handler(conn, request):
    message = request.message()
    if request.method != "POST" or not isinstance(message, dict) or message.get("method") == "initialize" or "id" not in message:
        return _http.answer(conn, request)
    _http.send(conn, b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n")
    while True:
        _http.send(conn, event)


_http.serve(handler)
