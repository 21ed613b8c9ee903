"""A small MCP server written with the official Python SDK (`mcp` 2.x, `MCPServer`), run by
the validator's tests over stdio or Streamable HTTP:

    venv/bin/python tests/validate/python_server.py                          # stdio
    venv/bin/python tests/validate/python_server.py streamable-http PORT     # http://127.0.0.1:PORT/mcp
"""

import sys

from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations

server = MCPServer("validate-python-server", version="1.0.0")


# Both tools only compute: annotated read-only, so the validator calls them.
@server.tool(annotations=ToolAnnotations(readOnlyHint=True))
def add(a: int, b: int) -> int:
    """Adds two numbers."""
    return a + b


@server.tool(annotations=ToolAnnotations(readOnlyHint=True))
def echo(text: str) -> str:
    """Echoes its text back."""
    return text


@server.resource("greeting://{name}")
def greeting(name: str) -> str:
    """A greeting for someone."""
    return f"Hello, {name}!"


@server.prompt()
def review(code: str) -> str:
    """Asks for a code review."""
    return f"Please review:\n{code}"


if __name__ == "__main__":
    transport = sys.argv[1] if len(sys.argv) > 1 else "stdio"
    if transport == "stdio":
        server.run("stdio")
    elif transport == "streamable-http" and len(sys.argv) == 3:
        # Loopback only: the SDK then turns on its DNS-rebinding protection (Host and Origin
        # checked against 127.0.0.1, localhost and [::1]).
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        sys.exit(f"usage: {sys.argv[0]} [stdio | streamable-http PORT]")
