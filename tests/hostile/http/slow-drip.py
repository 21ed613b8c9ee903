# exit: 4
# says: no end of the body within 1s
# Sends the head, then the body one byte every 20 ms: `initialize` never ends within the
# bound, so the server cannot be reached.
import json
import time
import _http


def handler(conn, request):
    message = request.message() or {"id": 1}
    body = json.dumps({"jsonrpc": "2.0", "id": message.get("id"), "result": _http.init_result(message)}).encode()
    _http.send(conn, b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(body))
    for byte in body:
        _http.send(conn, bytes([byte]))
        time.sleep(0.02)


_http.serve(handler)
