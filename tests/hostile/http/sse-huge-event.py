# exit: 1
# timeout: 5
# says: more than 50000 JSON values
# Answers every request with one 7.9 MB SSE event: a JSON-RPC answer padded with an array of
# four million small numbers.
import json
import _http

PAD = b"[" + b",".join([b"0"] * 3_950_000) + b"]"


def handler(conn, request):
    message = request.message()
    if request.method != "POST" or not isinstance(message, dict) or "id" not in message:
        return _http.answer(conn, request)
    reply = _http.reply_to(message)
    reply["pad"] = "PAD"
    data = json.dumps(reply).encode().replace(b'"PAD"', PAD)
    _http.send(conn, b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n")
    _http.send(conn, b"event: message\ndata: " + data + b"\n\n")


_http.serve(handler)
