"""Broken for reuse: the wrapped driver plays every step, but `reset` is never answered:
the runner waits its bound for the answer, then replaces the process, and the scenario
still ends within its bound."""

import proxy


def drop_reset_answer(request, reply):
    if request is not None and request["step"] == "reset":
        return None
    return reply


proxy.run(change_reply=drop_reset_answer)
