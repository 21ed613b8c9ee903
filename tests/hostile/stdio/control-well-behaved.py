# exit: 0
# timeout: 5
# A correct server (the suite's control: every check passes).
import _mcp

_mcp.serve()
