"""neuro-san's facts for the generic tests (tests/facts.py)."""

from __future__ import annotations

from tests.facts import Call, Facts, Stream

CHAT = "/api/v1/hello_world/streaming_chat"
HELLO = {"user_message": {"type": "HUMAN", "text": "hello"}, "chat_filter": {"chat_filter_type": "MAXIMAL"}}

FACTS = Facts(
    "neuro-san",
    # `default` documented on every operation, no response headers, nothing stored to read back
    schema_requirements=frozenset({"001", "003", "005", "006", "007"}),
    served=Call("GET", "/api/v1/hello_world/connectivity"),
    json_post=Call("POST", CHAT),
    named_values={"path.agent_name": ("hello_world", "math_guy", "music_nerd_pro")},
    stream=Stream(Call("POST", CHAT, HELLO), "ndjson", b'{"response"', before_stall=1, stall_fault="ns-stream-stall"),
)
