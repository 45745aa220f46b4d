"""A fake OpenAI-compatible LLM endpoint on loopback, for running real agents offline.

``POST /v1/chat/completions`` with ``stream: true`` answers one tool call, streamed as
chat.completion.chunk SSE events and ``[DONE]``; without ``stream`` it answers the same as one
chat.completion. The tool is chosen from the request's ``tools``: the only one offered, else a
clarification tool when a user message asks to be clarified (and none was asked yet), else
the final-answer tool; its arguments are the smallest instance of the tool's JSON schema, strings
filled with a short text. Stdlib only, so it runs in any interpreter.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

TEXT = "Rust began at Mozilla Research in 2006 and reached 1.0 in 2015."


def instance(schema: dict[str, Any], defs: dict[str, Any], name: str = "") -> Any:
    """The smallest value valid against ``schema`` (the subset function-calling schemas use)."""
    if "$ref" in schema:
        return instance(defs[schema["$ref"].rsplit("/", 1)[-1]], defs, name)
    for key in ("anyOf", "oneOf", "allOf"):
        if key in schema:
            options = [s for s in schema[key] if s.get("type") != "null"] or schema[key]
            return instance(options[0], defs, name)
    if "const" in schema:
        return schema["const"]
    if "enum" in schema:
        return schema["enum"][0]
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "object" or "properties" in schema:
        props = schema.get("properties", {})
        return {k: instance(v, defs, k) for k, v in props.items() if k in schema.get("required", props)}
    if kind == "array":
        count = max(schema.get("minItems", 1), 1)
        return [instance(schema.get("items", {"type": "string"}), defs, name) for _ in range(count)]
    if kind == "string":
        text = TEXT if name in ("answer", "content") else f"{name or 'text'}: fake"
        low, high = schema.get("minLength", 0), schema.get("maxLength", 10_000)
        return (text + "." * max(0, low - len(text)))[:high]
    if kind == "integer":
        return int(schema.get("minimum", 1))
    if kind == "number":
        return float(schema.get("minimum", 1))
    if kind == "boolean":
        return False
    return None


def choose_tool(body: dict[str, Any]) -> dict[str, Any] | None:
    tools: list[dict[str, Any]] = [t["function"] for t in body.get("tools") or [] if t.get("type") == "function"]
    if not tools:
        return None
    if len(tools) == 1:
        return tools[0]
    messages = body.get("messages") or []
    wants = any("clarify" in str(m.get("content", "")).lower() for m in messages if m.get("role") == "user")
    asked = any("clarif" in json.dumps(m.get("tool_calls") or "").lower() for m in messages)
    names = {t["name"]: t for t in tools}
    if wants and not asked:
        for name, tool in names.items():
            if "clarif" in name:
                return tool
    for name, tool in names.items():
        if "final" in name:
            return tool
    return tools[0]


def completion(body: dict[str, Any]) -> tuple[dict[str, Any] | None, str]:
    """The tool call (or None) and the text content to answer with."""
    tool = choose_tool(body)
    if tool is None:
        return None, TEXT
    parameters = tool.get("parameters") or {}
    args = instance(parameters, parameters.get("$defs", {}))
    call = {
        "id": f"call_{int(time.time() * 1000)}",
        "type": "function",
        "function": {"name": tool["name"], "arguments": json.dumps(args)},
    }
    return call, ""


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    calls: list[dict[str, Any]]  # set per server

    def log_message(self, *args: Any) -> None:
        pass

    def _json(self, status: int, payload: Any) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        if self.path.rstrip("/").endswith("/models"):
            self._json(
                200,
                {"object": "list", "data": [{"id": "fake-llm", "object": "model", "created": 0, "owned_by": "tests"}]},
            )
        else:
            self._json(404, {"error": {"message": "not found"}})

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        try:
            body = json.loads(self.rfile.read(length) or b"{}")
        except json.JSONDecodeError:
            self._json(400, {"error": {"message": "invalid JSON"}})
            return
        if not self.path.rstrip("/").endswith("/chat/completions"):
            self._json(404, {"error": {"message": "not found"}})
            return
        self.server.calls.append(body)  # type: ignore[attr-defined]
        call, text = completion(body)
        model, created, cid = body.get("model", "fake-llm"), int(time.time()), f"chatcmpl-{time.time_ns()}"
        finish = "tool_calls" if call else "stop"
        if not body.get("stream"):
            message: dict[str, Any] = {"role": "assistant", "content": text or None}
            if call:
                message["tool_calls"] = [call]
            self._json(
                200,
                {
                    "id": cid,
                    "object": "chat.completion",
                    "created": created,
                    "model": model,
                    "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                    "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
                },
            )
            return
        delta: dict[str, Any] = {"role": "assistant", "content": text or None}
        if call:
            delta["tool_calls"] = [{"index": 0, **call}]
        chunks = [
            {"index": 0, "delta": delta, "finish_reason": None},
            {"index": 0, "delta": {}, "finish_reason": finish},
        ]
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        for choice in chunks:
            chunk = {
                "id": cid,
                "object": "chat.completion.chunk",
                "created": created,
                "model": model,
                "choices": [choice],
            }
            self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()
        self.close_connection = True


@contextmanager
def fake_llm() -> Iterator[ThreadingHTTPServer]:
    """Serve on a free 127.0.0.1 port in a daemon thread; ``server.server_port``, ``server.calls``."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    server.calls = []  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


if __name__ == "__main__":  # python fake_llm.py: serve until interrupted, print the base URL
    with fake_llm() as srv:
        print(f"http://127.0.0.1:{srv.server_port}/v1", flush=True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass
