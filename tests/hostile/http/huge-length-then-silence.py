# exit: 4
# says: no end of the body within 1s
# Answers every request in full, but announces a 3 GB body (Content-Length: 3000000000) and
# then stays silent with the connection open: the answer never ends, so no exchange passes.
import json
import threading
import _http


def handler(conn, request):
    message = request.message()
    reply = _http.reply_to(message) if message is not None else None
    body = json.dumps(reply).encode() if reply is not None else b""
    _http.send(conn, b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 3000000000\r\n\r\n" + body)
    threading.Event().wait()


_http.serve(handler)
