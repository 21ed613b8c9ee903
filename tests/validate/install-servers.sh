#!/usr/bin/env bash
# Installs the third-party MCP servers the validator's tests run against, into
# target/validate-servers/ (never committed). Idempotent: a server already installed at the
# pinned version is left alone, so a second run takes well under a second.
#
#   node/  @modelcontextprotocol/server-everything (npm), run as `node node/node_modules/.../dist/index.js stdio`
#   node/  @modelcontextprotocol/server-filesystem and server-memory (npm), the reference servers
#   venv/  the official Python SDK `mcp` (PyPI), for tests/validate/python_server.py,
#          tests/validate/python_auth_server.py (its auth helpers) and the python client
#          driver (adapters/python/driver.py)
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

# npm_pinned DIR PACKAGE VERSION: installs PACKAGE@VERSION into DIR unless that version is there.
npm_pinned() {
    local dir="$1" package="$2" version="$3"
    if ! grep -q "\"version\": \"$version\"" "$dir/node_modules/$package/package.json" 2>/dev/null; then
        echo "installing $package@$version into $dir"
        [ -f "$dir/package.json" ] || echo '{"private": true}' > "$dir/package.json"
        npm install --prefix "$dir" --no-audit --no-fund --loglevel=error "$package@$version"
    fi
}

# pip_pinned VENV PACKAGE VERSION: installs PACKAGE==VERSION (PyPI) into the venv VENV
# (made if missing) unless that version is there.
pip_pinned() {
    local venv="$1" package="$2" version="$3"
    if ! "$venv/bin/python" -c "import importlib.metadata as m, sys; sys.exit(m.version('$package') != '$version')" 2>/dev/null; then
        echo "installing $package==$version (PyPI) into $venv"
        [ -x "$venv/bin/python" ] || python3 -m venv "$venv"
        "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "$package==$version"
    fi
}

npm_pinned "$DEST/node" @modelcontextprotocol/server-everything "$EVERYTHING_VERSION"
npm_pinned "$DEST/node" @modelcontextprotocol/client "$TS_CLIENT_VERSION"
pip_pinned "$DEST/venv" mcp "$MCP_PY_VERSION"
npm_pinned "$DEST/ts" @modelcontextprotocol/server "$MCP_TS_VERSION"
npm_pinned "$DEST/node" @modelcontextprotocol/server-filesystem "$FILESYSTEM_VERSION"
npm_pinned "$DEST/node" @modelcontextprotocol/server-memory "$MEMORY_VERSION"
pip_pinned "$DEST/venv-time" mcp-server-time "$TIME_VERSION"
pip_pinned "$DEST/venv-time" mcp-server-git "$GIT_VERSION"
