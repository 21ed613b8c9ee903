# exit: 4
# says: nothing within 1s
# Reads each request and never answers (the connection stays open).
import time
import _http


def handler(conn, request):
    time.sleep(3600)


_http.serve(handler)
