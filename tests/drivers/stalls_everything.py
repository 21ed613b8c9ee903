"""Broken: says hello claiming every transport and capability, reusable, then answers
nothing, not even `reset`: each scenario it runs must still end within its bound."""

import json
import sys

CAPABILITIES = [
    "call_timeout", "configurable_timeouts", "cancel", "exited", "reconnect",
    "list_changed_count", "custom_headers", "token_provider", "redirect_policy",
    "trusted_roots", "body_cap", "process_group", "tool_layer", "interrupt_host",
    "fault_hooks", "stateless", "drop", "raw_messages", "server_info", "server_pid",
    "session_id", "reusable",
]
hello = {"name": "stalls-everything", "version": "0", "transports": ["stdio", "http", "legacy-sse"],
         "capabilities": CAPABILITIES, "profile": "strict"}
print(json.dumps({"hello": hello}), flush=True)
for _line in sys.stdin:
    pass
