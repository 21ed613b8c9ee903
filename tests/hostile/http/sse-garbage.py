# exit: 1
# timeout: 5
# Answers the handshake, then SSE frames whose data is not JSON, forever.
import _http

frames = b"data: \x1b[2Jnot json {{{ \xff\n\n" * 512

_http.sse_forever_after_handshake(frames)
