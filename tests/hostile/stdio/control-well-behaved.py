# exit: 0
# A correct server (the suite's control: every check passes).
import _mcp

_mcp.serve()
