# exit: 1
# timeout: 5
# Echoes the request's headers and path (the Authorization value, the URL's token) in its
# answers, and hands the Authorization value back as its Mcp-Session-Id.
import json
import _http


def handler(conn, request):
    message = request.message()
    if request.method != "POST" or not isinstance(message, dict):
        return _http.respond(conn, "400 Bad Request", {"echo": request.headers, "path": request.path})
    auth = request.headers.get("authorization", "none")
    echo = json.dumps({"headers": request.headers, "path": request.path})
    if message.get("method") == "initialize":
        result = _http.init_result(message, name=echo, version=auth)
        return _http.respond(conn, "200 OK", {"jsonrpc": "2.0", "id": message["id"], "result": result}, [("Mcp-Session-Id", auth)])
    if "id" not in message:
        return _http.respond(conn, "202 Accepted", b"")
    _http.respond(conn, "200 OK", {"jsonrpc": "2.0", "id": message["id"], "error": {"code": 1, "message": "you sent " + echo}})


_http.serve(handler)
