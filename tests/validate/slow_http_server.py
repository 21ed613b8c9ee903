"""A correct Streamable HTTP server of the `initialize` era, on 127.0.0.1, that answers its
first `initialize` after FIRST_S seconds (default 0.7) and every later one after LATER_S
(default 1.4), as a server answering several sessions at once on a busy machine does. JSON
answers only: `ping`, an empty `tools/list`, -32601 to anything else; 202 to notifications;
405 to GET and DELETE. Prints its URL, then serves until killed or its input ends.
Run by the validator's tests: python3 slow_http_server.py"""

import json
import os
import sys
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

REVISIONS = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"]
FIRST_S = float(os.environ.get("FIRST_S", "0.7"))
LATER_S = float(os.environ.get("LATER_S", "1.4"))
lock = threading.Lock()
answered = {"initialize": 0}


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def answer(self, status, body=None, headers=()):
        data = b"" if body is None else json.dumps(body).encode()
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        if body is not None:
            self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        self.answer(405)

    def do_DELETE(self):
        self.answer(405)

    def do_POST(self):
        length = int(self.headers.get("Content-Length", "0"))
        try:
            message = json.loads(self.rfile.read(length))
        except ValueError:
            return self.answer(400, {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}})
        if not isinstance(message, dict) or "id" not in message:
            return self.answer(202)
        method, reply = message.get("method"), {"jsonrpc": "2.0", "id": message["id"]}
        headers = []
        if method == "initialize":
            with lock:
                first = answered["initialize"] == 0
                answered["initialize"] += 1
            time.sleep(FIRST_S if first else LATER_S)
            offered = message.get("params", {}).get("protocolVersion")
            reply["result"] = {
                "protocolVersion": offered if offered in REVISIONS else REVISIONS[-1],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "slow-http", "version": "1.0"},
            }
            headers.append(("Mcp-Session-Id", uuid.uuid4().hex))
        elif method == "ping":
            reply["result"] = {}
        elif method == "tools/list":
            reply["result"] = {"tools": []}
        else:
            reply["error"] = {"code": -32601, "message": "Method not found"}
        self.answer(200, reply, headers)


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
server.daemon_threads = True
print(f"http://127.0.0.1:{server.server_address[1]}/mcp", flush=True)
threading.Thread(target=server.serve_forever, daemon=True).start()
sys.stdin.read()
