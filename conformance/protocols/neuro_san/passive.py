"""NeuroSan requirements judged from traffic: each streamed ChatResponse as it is forwarded (one
JSON object per line, a response message), the final AGENT_FRAMEWORK answer and its chat_context,
chat_filter MINIMAL/MAXIMAL, the stream's label, connectivity and function answers, Status errors."""

from __future__ import annotations

from typing import Any

from ...check.passive import Checks, StreamState, Verdict
from ...check.shown import shown
from ...check.streams import Frame
from ...check.traffic import Observed
from .requirements import ANSWER, STREAM_MEDIA_TYPES, frame_problem, functionless, intermediate, is_status, nameless

CHAT = "AgentService_StreamingChat"


class Passive(Checks):
    def stream_kind(self, ex: Observed) -> str | None:
        return "ndjson" if ex.operation_id == CHAT else None

    def on_response(self, ex: Observed, v: Verdict) -> None:
        op, status, body = ex.operation_id, ex.status, ex.json()
        assert status is not None
        if status >= 400 and ex.path_params.get("agent_name"):
            v.check(
                "NS-ERR-002",
                is_status(body),
                f"{op} {status}: body {shown(body, 120)} is not a Status {{code: int, message: str}}",
            )
        if op == CHAT and status not in (200, 404) and not ex.problems and not ex.left_open:
            # a chat the document takes is answered with its stream (404: an agent the server lacks)
            v.fail("NS-STREAM-002", f"a chat request that conforms answered {status}, not a stream")
        if status != 200 or not isinstance(body, dict):
            return
        if op == "AgentService_Connectivity":
            unnamed = [body["connectivity_info"][n] for n in nameless(body)]  # the scenario's rule
            problems = self.violations_of("ConnectivityResponse", body)
            v.check(
                "NS-CONN-001",
                not unnamed and not problems,
                f"not a ConnectivityResponse whose entries name their origin: {problems or str(unnamed)[:160]}",
            )
        elif op == "AgentService_Function":
            problems = self.violations_of("FunctionResponse", body)
            why = "; ".join(map(str, problems)) if problems else functionless(body)
            v.check("NS-FUNC-001", why is None, f"the answer is no FunctionResponse: {why}")

    def on_stream_start(self, ex: Observed, v: Verdict, stream: StreamState) -> None:
        v.check(
            "NS-STREAM-003",
            ex.content_type in STREAM_MEDIA_TYPES,
            f"the stream is labelled {shown(ex.content_type)}, not one of {shown(list(STREAM_MEDIA_TYPES))}",
        )
        request = ex.request_json()
        chat_filter = request.get("chat_filter") if isinstance(request, dict) else None
        stream.notes.update(
            messages=[], filter=chat_filter.get("chat_filter_type") if isinstance(chat_filter, dict) else None
        )

    def on_frame(self, ex: Observed, v: Verdict, stream: StreamState, frame: Frame) -> None:
        problem = frame_problem(frame, self.schemas)  # the scenario's rule
        v.check("NS-STREAM-001", not problem, problem)
        message = frame.value.get("response") if isinstance(frame.value, dict) else None
        if isinstance(message, dict):
            stream.notes["messages"].append(message)

    def on_stream_end(self, ex: Observed, v: Verdict, stream: StreamState, error: str | None) -> None:
        messages: list[dict[str, Any]] = stream.notes["messages"]
        if error:
            v.fail("NS-STREAM-001", f"the stream broke after {stream.frames} object(s): {error}")
            v.fail("NS-STREAM-002", f"the stream never reached its answer: {error}")
            return
        last = messages[-1] if messages else {}
        text = last.get("text")
        answered = last.get("type") == ANSWER and isinstance(text, str) and text.strip()
        types = [m.get("type") for m in messages]
        if not v.check("NS-STREAM-002", answered, f"the last streamed message is not a {ANSWER} answer: {types}"):
            return
        context = last.get("chat_context")
        problems = self.violations_of("ChatContext", context) if isinstance(context, dict) else ["none"]
        v.check(
            "NS-CTX-001",
            isinstance(context, dict) and not problems and context.get("chat_histories"),
            f"the final answer's chat_context is {shown(context, 120)} ({problems})",
        )
        if stream.notes["filter"] == "MINIMAL":
            extra = intermediate(messages)
            v.check("NS-FILTER-001", not extra, f"with MINIMAL the stream also carried {extra}")
        elif stream.notes["filter"] == "MAXIMAL":
            v.check("NS-FILTER-002", len(messages) > 1, f"with MAXIMAL the stream carried only {types}")
