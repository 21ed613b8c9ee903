"""A driver that wraps another driver (the command after `--`), changing one behaviour.

Each deliberately broken client in this folder is this proxy with one `change`: it sees
every request from the runner and every reply from the wrapped driver, and may rewrite,
drop or answer them itself. The wrapped driver's stderr passes through as the log.
"""

import json
import subprocess
import sys
import threading


def run(change_request=None, change_reply=None, change_hello=None):
    """`change_request(request)` returns None (forward it), a reply (answer it here) or a
    list of requests (forward these instead); `change_reply(request, reply)` returns the
    reply to pass on, or None to drop it; `change_hello(hello)` returns the hello to say."""
    inner = sys.argv[sys.argv.index("--") + 1:]
    child = subprocess.Popen(inner, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
    out_lock = threading.Lock()
    requests = {}

    def emit(message):
        with out_lock:
            sys.stdout.write(json.dumps(message) + "\n")
            sys.stdout.flush()

    def emit_line(line):
        with out_lock:
            sys.stdout.write(line.decode())
            sys.stdout.flush()

    def forward_replies():
        hello = True
        for line in child.stdout:
            # Unchanged lines pass as they are: a reply of megabytes is not parsed twice.
            if hello and change_hello is None or not hello and change_reply is None:
                hello = False
                emit_line(line)
                continue
            message = json.loads(line)
            if hello:
                hello = False
                message = change_hello(message)
            else:
                message = change_reply(requests.get(message.get("id")), message)
            if message is not None:
                emit(message)

    reader = threading.Thread(target=forward_replies, daemon=True)
    reader.start()
    for line in sys.stdin:
        if change_request is None and change_reply is None:
            child.stdin.write(line.encode())
            child.stdin.flush()
            continue
        request = json.loads(line)
        requests[request["id"]] = request
        forward = [request]
        if change_request is not None:
            answer = change_request(request)
            if isinstance(answer, list):
                forward = answer
            elif answer is not None:
                emit(answer)
                continue
        for message in forward:
            child.stdin.write((json.dumps(message) + "\n").encode())
        child.stdin.flush()
    child.stdin.close()
    child.wait()
    reader.join(timeout=1)


if __name__ == "__main__":
    # Unchanged: the wrapped driver as it is (its hello, `reusable` included, passes through).
    run()
