# exit: 1
# says: no end of the body within 1s
# Answers the handshake correctly, then answers every other request in full but announces a
# 3 GB body (Content-Length: 3000000000) and stays silent with the connection open: no
# answer ever ends, so none passes, and the run ends within its bound however many checks
# would ask.
import json
import threading
import _http


def handler(conn, request):
    message = request.message()
    if request.method != "POST" or not isinstance(message, dict) or message.get("method") == "initialize" or "id" not in message:
        return _http.answer(conn, request)
    body = json.dumps(_http.reply_to(message)).encode()
    _http.send(conn, b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 3000000000\r\n\r\n" + body)
    threading.Event().wait()


_http.serve(handler)
