"""A small Streamable HTTP server on raw sockets, so the hostile kinds can send anything.

`serve(handler)` listens on 127.0.0.1 (a free port, printed first on stdout) and calls
`handler(conn, request)` for each request on its own thread; `request` has `method`,
`path`, `headers` (lowercased names) and `body`. `answer(conn, request)` is what a correct
server does.
"""
import json
import socket
import sys
import threading

REVISIONS = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"]
SESSION = "s-1234"


class Request:
    def __init__(self, method, path, headers, body):
        self.method, self.path, self.headers, self.body = method, path, headers, body

    def message(self):
        try:
            return json.loads(self.body)
        except ValueError:
            return None


def read_request(conn):
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            return None
        data += chunk
    head, body = data.split(b"\r\n\r\n", 1)
    lines = head.decode("latin-1").split("\r\n")
    method, path = lines[0].split(" ")[:2]
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    length = int(headers.get("content-length", "0"))
    while len(body) < length:
        chunk = conn.recv(65536)
        if not chunk:
            break
        body += chunk
    return Request(method, path, headers, body)


def send(conn, data):
    try:
        conn.sendall(data)
    except OSError:
        pass


def respond(conn, status, body=b"", headers=(), content_type="application/json"):
    if not isinstance(body, bytes):
        body = json.dumps(body).encode()
    head = "HTTP/1.1 %s\r\nContent-Type: %s\r\nContent-Length: %d\r\nConnection: close\r\n" % (status, content_type, len(body))
    for name, value in headers:
        head += "%s: %s\r\n" % (name, value)
    send(conn, head.encode("latin-1") + b"\r\n" + body)


def init_result(message, name="hostile-http", version="1.0"):
    offered = message.get("params", {}).get("protocolVersion")
    return {
        "protocolVersion": offered if offered in REVISIONS else REVISIONS[-1],
        "capabilities": {"tools": {}},
        "serverInfo": {"name": name, "version": version},
    }


def reply_to(message):
    """The JSON-RPC answer a correct server gives (None for a notification)."""
    if not isinstance(message, dict) or "id" not in message:
        return None
    method = message.get("method")
    if method == "initialize":
        return {"jsonrpc": "2.0", "id": message["id"], "result": init_result(message)}
    if method == "ping":
        return {"jsonrpc": "2.0", "id": message["id"], "result": {}}
    if method == "tools/list":
        return {"jsonrpc": "2.0", "id": message["id"], "result": {"tools": []}}
    if method == "tools/call":
        return {"jsonrpc": "2.0", "id": message["id"], "error": {"code": -32602, "message": "unknown tool"}}
    return {"jsonrpc": "2.0", "id": message["id"], "error": {"code": -32601, "message": "Method not found"}}


def answer(conn, request):
    """A correct Streamable HTTP server (JSON answers, one session)."""
    if request.method == "DELETE":
        return respond(conn, "200 OK", b"")
    if request.method != "POST":
        return respond(conn, "405 Method Not Allowed", b"")
    message = request.message()
    if message is None:
        return respond(conn, "400 Bad Request", {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}})
    reply = reply_to(message)
    if reply is None:
        return respond(conn, "202 Accepted", b"")
    headers = [("Mcp-Session-Id", SESSION)] if message.get("method") == "initialize" else []
    respond(conn, "200 OK", reply, headers)


def serve(handler=answer):
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(128)
    print(listener.getsockname()[1], flush=True)

    def run(conn):
        try:
            request = read_request(conn)
            if request is not None:
                handler(conn, request)
        except Exception:
            pass
        finally:
            try:
                conn.close()
            except OSError:
                pass

    while True:
        conn, _ = listener.accept()
        threading.Thread(target=run, args=(conn,), daemon=True).start()


def sse_forever_after_handshake(chunk):
    """Answers the handshake (and anything that is not a request), then answers each request
    with an SSE stream that writes `chunk` forever and never holds the answer."""

    def handler(conn, request):
        message = request.message()
        if request.method != "POST" or not isinstance(message, dict) or message.get("method") == "initialize" or "id" not in message:
            return answer(conn, request)
        send(conn, b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n")
        while True:
            send(conn, chunk)

    serve(handler)
