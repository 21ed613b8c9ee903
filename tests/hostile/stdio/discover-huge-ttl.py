# exit: 4
# timeout: 5
# args: --revision 2026-07-28
# says: number out of range
# never-says: does not speak
# Answers `server/discover` as a 2026-07-28 server would, but with a `ttlMs` of 1e400, a
# number no double holds: the reader refuses the answer, so nothing is judged (never a pass,
# never "does not speak 2026-07-28").
import _mcp


def on_request(message):
    if message["method"] != "server/discover":
        return False
    _mcp.write(
        b'{"jsonrpc":"2.0","id":%d,"result":{"resultType":"complete",'
        b'"supportedVersions":["2026-07-28"],"capabilities":{"tools":{}},'
        b'"serverInfo":{"name":"hostile","version":"1.0"},'
        b'"ttlMs":1e400,"cacheScope":"public"}}\n' % message["id"]
    )
    return True


_mcp.serve(on_request)
