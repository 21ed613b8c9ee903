# exit: 1
# timeout: 5
# says: connection closed before message completed
# Accepts each connection and closes it without a word.
import _http


def handler(conn, request):
    pass


_http.serve(handler)
