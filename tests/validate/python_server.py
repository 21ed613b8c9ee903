"""A small MCP server written with the official Python SDK (`mcp` 2.x, `MCPServer`), run
over stdio by the validator's tests: `venv/bin/python tests/validate/python_server.py`."""

from mcp.server.mcpserver import MCPServer

server = MCPServer("validate-python-server", version="1.0.0")


@server.tool()
def add(a: int, b: int) -> int:
    """Adds two numbers."""
    return a + b


@server.tool()
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
    server.run("stdio")
