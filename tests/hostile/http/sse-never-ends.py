# exit: 1
# Answers the handshake, then answers every request with an SSE stream of notifications
# that never ends and never holds the answer.
import _http

event = b'event: message\ndata: {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}\n\n' * 256

_http.sse_forever_after_handshake(event)
