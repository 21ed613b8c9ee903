# exit: 1
# timeout: 5
# says: stopped reading at the 8388608-byte limit
# Answers the handshake, then answers every request with a JSON body announced as 3 GB
# (Content-Length: 3000000000) and streamed as fast as the socket takes it.
import _http

chunk = b'{"jsonrpc":"2.0","id":1,"result":{"pad":"' + b"x" * (1 << 20)


def handler(conn, request):
    message = request.message()
    if request.method != "POST" or not isinstance(message, dict) or message.get("method") == "initialize" or "id" not in message:
        return _http.answer(conn, request)
    _http.send(conn, b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 3000000000\r\n\r\n")
    while True:
        try:
            conn.sendall(chunk)
        except OSError:
            return


_http.serve(handler)
