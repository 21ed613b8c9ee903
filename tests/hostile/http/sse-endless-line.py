# exit: 1
# timeout: 5
# says: stopped reading at the 8388608-byte limit
# Answers the handshake, then answers every request with an SSE stream whose first `data`
# line never ends (no line break, ever).
import _http

_http.sse_forever_after_handshake(b"x" * (1 << 16))
