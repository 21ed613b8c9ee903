#!/usr/bin/env bash
# Installs the third-party MCP servers the validator's tests run against, into
# target/validate-servers/ (never committed). Idempotent: a server already installed at the
# pinned version is left alone, so a second run takes well under a second.
#
#   node/  @modelcontextprotocol/server-everything (npm), run as `node node/node_modules/.../dist/index.js stdio`
#   node/  @modelcontextprotocol/server-filesystem and server-memory (npm), the reference servers
#   venv/  the official Python SDK `mcp` (PyPI), for tests/validate/python_server.py
#          and the python client driver (adapters/python/driver.py)
#   node/  also @modelcontextprotocol/client (npm), for the node client driver (adapters/typescript/)
#   ts/    the official TypeScript SDK 2.x `@modelcontextprotocol/server` (npm), for tests/validate/ts_server.cjs
#   venv-time/  mcp-server-time and mcp-server-git (PyPI), the reference time and git servers,
#          in a venv of their own (they pin their own `mcp`)
set -euo pipefail
cd "$(dirname "$0")/../.."

EVERYTHING_VERSION="2026.8.31"
FILESYSTEM_VERSION="2026.8.31"
MEMORY_VERSION="2026.8.31"
TIME_VERSION="2026.10.19"
GIT_VERSION="2026.10.19"
MCP_PY_VERSION="2.3.0"
MCP_TS_VERSION="2.4.0"
TS_CLIENT_VERSION="2.4.0"
DEST="target/validate-servers"
mkdir -p "$DEST/node" "$DEST/ts"

everything="$DEST/node/node_modules/@modelcontextprotocol/server-everything/package.json"
if ! grep -q "\"version\": \"$EVERYTHING_VERSION\"" "$everything" 2>/dev/null; then
    echo "installing @modelcontextprotocol/server-everything@$EVERYTHING_VERSION into $DEST/node"
    [ -f "$DEST/node/package.json" ] || echo '{"private": true}' > "$DEST/node/package.json"
    npm install --prefix "$DEST/node" --no-audit --no-fund --loglevel=error \
        "@modelcontextprotocol/server-everything@$EVERYTHING_VERSION"
fi

ts_client="$DEST/node/node_modules/@modelcontextprotocol/client/package.json"
if ! grep -q "\"version\": \"$TS_CLIENT_VERSION\"" "$ts_client" 2>/dev/null; then
    echo "installing @modelcontextprotocol/client@$TS_CLIENT_VERSION into $DEST/node"
    [ -f "$DEST/node/package.json" ] || echo '{"private": true}' > "$DEST/node/package.json"
    npm install --prefix "$DEST/node" --no-audit --no-fund --loglevel=error \
        "@modelcontextprotocol/client@$TS_CLIENT_VERSION"
fi

if ! "$DEST/venv/bin/python" -c "import importlib.metadata as m, sys; sys.exit(m.version('mcp') != '$MCP_PY_VERSION')" 2>/dev/null; then
    echo "installing mcp==$MCP_PY_VERSION (PyPI) into $DEST/venv"
    [ -x "$DEST/venv/bin/python" ] || python3 -m venv "$DEST/venv"
    "$DEST/venv/bin/python" -m pip install --quiet --disable-pip-version-check "mcp==$MCP_PY_VERSION"
fi

ts_sdk="$DEST/ts/node_modules/@modelcontextprotocol/server/package.json"
if ! grep -q "\"version\": \"$MCP_TS_VERSION\"" "$ts_sdk" 2>/dev/null; then
    echo "installing @modelcontextprotocol/server@$MCP_TS_VERSION into $DEST/ts"
    [ -f "$DEST/ts/package.json" ] || echo '{"private": true}' > "$DEST/ts/package.json"
    npm install --prefix "$DEST/ts" --no-audit --no-fund --loglevel=error \
        "@modelcontextprotocol/server@$MCP_TS_VERSION"
fi

for pinned in "server-filesystem@$FILESYSTEM_VERSION" "server-memory@$MEMORY_VERSION"; do
    name="${pinned%@*}"
    version="${pinned#*@}"
    if ! grep -q "\"version\": \"$version\"" "$DEST/node/node_modules/@modelcontextprotocol/$name/package.json" 2>/dev/null; then
        echo "installing @modelcontextprotocol/$pinned into $DEST/node"
        npm install --prefix "$DEST/node" --no-audit --no-fund --loglevel=error "@modelcontextprotocol/$pinned"
    fi
done

if ! "$DEST/venv-time/bin/python" -c "import importlib.metadata as m, sys; sys.exit(m.version('mcp-server-time') != '$TIME_VERSION')" 2>/dev/null; then
    echo "installing mcp-server-time==$TIME_VERSION (PyPI) into $DEST/venv-time"
    [ -x "$DEST/venv-time/bin/python" ] || python3 -m venv "$DEST/venv-time"
    "$DEST/venv-time/bin/python" -m pip install --quiet --disable-pip-version-check "mcp-server-time==$TIME_VERSION"
fi

if ! "$DEST/venv-time/bin/python" -c "import importlib.metadata as m, sys; sys.exit(m.version('mcp-server-git') != '$GIT_VERSION')" 2>/dev/null; then
    echo "installing mcp-server-git==$GIT_VERSION (PyPI) into $DEST/venv-time"
    "$DEST/venv-time/bin/python" -m pip install --quiet --disable-pip-version-check "mcp-server-git==$GIT_VERSION"
fi
