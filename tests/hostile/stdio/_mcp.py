"""A small, correct MCP stdio server that the hostile kinds bend one way each.

`serve(on_request)` reads newline-delimited JSON-RPC from stdin and answers every request
as a well-behaved server would (`answer`), unless `on_request(message)` handles it (it
returns True). The secret the validator must never print is in $API_KEY.
"""
import json
import os
import sys

SECRET = os.environ.get("API_KEY", "")
REVISIONS = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"]
out = sys.stdout.buffer


def write(data):
    """Writes bytes or a JSON object (as one line)."""
    if not isinstance(data, (bytes, bytearray)):
        data = (json.dumps(data) + "\n").encode()
    try:
        out.write(data)
        out.flush()
    except (BrokenPipeError, OSError):
        os._exit(0)


def result(message, value):
    write({"jsonrpc": "2.0", "id": message["id"], "result": value})


def error(message, code, text):
    write({"jsonrpc": "2.0", "id": message["id"], "error": {"code": code, "message": text}})


def init_result(message, name="hostile", version="1.0"):
    offered = message.get("params", {}).get("protocolVersion")
    return {
        "protocolVersion": offered if offered in REVISIONS else REVISIONS[-1],
        "capabilities": {"tools": {}},
        "serverInfo": {"name": name, "version": version},
    }


def answer(message):
    """What a correct server says to a request."""
    method = message.get("method")
    if method == "initialize":
        result(message, init_result(message))
    elif method == "ping":
        result(message, {})
    elif method == "tools/list":
        result(message, {"tools": []})
    elif method == "tools/call":
        error(message, -32602, "unknown tool")
    else:
        error(message, -32601, "Method not found")


def serve(on_request=lambda message: False):
    for line in sys.stdin.buffer:
        try:
            message = json.loads(line)
        except ValueError:
            write({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}})
            continue
        if not isinstance(message, dict) or "id" not in message or "method" not in message:
            continue
        if not on_request(message):
            answer(message)


def flood_after_handshake(chunk):
    """Answers the handshake, then writes `chunk` forever in answer to the first other request."""

    def on_request(message):
        if message["method"] == "initialize":
            return False
        while True:
            write(chunk)

    serve(on_request)
