"""NeuroSan's model: an agent's description, its conversations and its errors, as every answer
must show them.

The server keeps no conversation: the client carries it in the ``chat_context`` of each answer
and sends it back. So the ledger holds the conversations the run had, each the context its last
answer returned and the front man's history in it, and the first description of the agent
(connectivity and function). Sequences start conversations and continue any earlier one (an older
context sent again forks it, which a stateless server must allow), under every chat filter; read
the description again; and provoke errors. After each call the model compares:

- the stream under every filter and on every turn: it ends with the AGENT_FRAMEWORK answer carrying
  a chat_context, and every message's type is one the ChatMessage enum names;
- the conversation by its structure: the front man's history holds the question asked as a HUMAN
  message, and a continued history starts with the one sent back, message for message (type,
  text, origin), in order, with the new question after it and no other (check/turns.py: a history
  sent back that comes back doubled asks the earlier questions again; a new conversation asks only
  its own, not those of the most recent one);
- the description: connectivity and function answer what they answered first, and connectivity
  names each node once;
- every error's Status code: a google.rpc.Code, and not OK.

Tolerated because others own them: a chat answered with another status (NS-STREAM-002), a stream
that is not whole JSON objects (NS-STREAM-001), an error body that is not a Status (NS-ERR-002),
an unknown agent answered 2xx (NS-ERR-001).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st
from hypothesis.stateful import Bundle, initialize, rule

from ...check import turns
from ...check.model import Model, ModelMachine, Session, Streamed
from ...check.oracle import rpc_code_problems
from ...check.shown import shown
from ...verdicts.requirements import Level, Requirement
from .requirements import (
    ANSWER,
    INVALID_CHAT_BODIES,
    UNKNOWN_AGENT,
    WELL_KNOWN_AGENT,
    asked,
    brief,
    chat_request,
    histories,
)

DOC = "neuro-san/openapi.yaml"
PROTOCOL = "neuro-san"
CHAT = f"{DOC}#/paths/~1api~1v1~1{{agent_name}}~1streaming_chat/post/description"
MAX_LISTED = 5

CODES = "NS-MODEL-001"
STREAMS = "NS-MODEL-002"
CONVERSATION = "NS-MODEL-003"
DESCRIBED = "NS-MODEL-004"

REQUIREMENTS = (
    Requirement(
        CODES,
        Level.SHOULD,
        "Every error Status (an unknown agent on connectivity, function and streaming_chat; a chat body "
        "that is not a ChatRequest) carries a code that is a google.rpc.Code (0-16) other than OK (0)",
        f"{DOC}#/components/schemas/Status/properties/code",
        PROTOCOL,
        "model",
    ),
    Requirement(
        STREAMS,
        Level.MUST,
        "Under every chat filter (none, MINIMAL, MAXIMAL) and on every turn of a conversation, the stream "
        "ends with the AGENT_FRAMEWORK answer, with text and a chat_context holding a chat history, and "
        "every streamed message's type is one the ChatMessage enum names",
        CHAT,
        PROTOCOL,
        "model",
    ),
    Requirement(
        CONVERSATION,
        Level.MUST,
        "The answer's chat_context holds the front man's history with the question as a HUMAN message; "
        "sent back (the latest context or an earlier one), the next answer's history starts with that "
        "history message for message (type, text, origin), in order, and the new question follows it, the only "
        "HUMAN message after it; a conversation started without a chat_context asks no question but its own",
        f"{DOC}#/components/schemas/ChatContext",
        PROTOCOL,
        "model",
    ),
    Requirement(
        DESCRIBED,
        Level.SHOULD,
        "Connectivity (its connectivity_info) and function describe the agent the same way on every "
        "call, before and after chats, and connectivity describes each node (origin) once",
        f"{DOC}#/components/schemas/ConnectivityResponse",
        PROTOCOL,
        "model",
    ),
)

MESSAGE_TYPES = ("UNKNOWN", "SYSTEM", "HUMAN", "AI", "AGENT", "AGENT_FRAMEWORK", "AGENT_TOOL_RESULT", "AGENT_PROGRESS")
"""components/schemas/ChatMessage/properties/type/enum."""
FILTERS = (None, "MINIMAL", "MAXIMAL")
TEXTS = (
    "Hello! Please answer briefly.",
    "What is 6 * 7? Please answer briefly.",
    "Conformance: my favourite colour is teal. Please answer briefly.",
)
ROUTES = (("GET", "connectivity"), ("GET", "function"), ("POST", "streaming_chat"))
ERRORS = (*(f"unknown agent {r}" for _, r in ROUTES), *(what for what, _ in INVALID_CHAT_BODIES))


@dataclass(slots=True)
class Conversation:
    context: dict[str, Any]
    """The chat_context its last answer returned: what the next turn sends back."""
    origin: str
    """The front man's history, by its origin (JSON), in that context."""
    history: list[dict[str, Any]]


@dataclass(slots=True)
class Ledger:
    agent: str | None
    why: str = ""
    """Why there is no agent to talk to."""
    connectivity: Any = None
    function: Any = None
    conversations: list[Conversation] = field(default_factory=list)


def _json(session: Session, path: str) -> Any:
    response = session.request("GET", path)
    return response.json_value() if response.status == 200 else None


def prepare(session: Session) -> Ledger:
    """The agent to talk to (the concierge list's first that answers, else the well-known one) and
    its description as first read."""
    listed = _json(session, "/api/v1/list")
    agents = listed.get("agents") if isinstance(listed, dict) else None
    names = [a["agent_name"] for a in agents or [] if isinstance(a, dict) and isinstance(a.get("agent_name"), str)]
    for name in dict.fromkeys([*names[:MAX_LISTED], WELL_KNOWN_AGENT]):
        connectivity = _json(session, f"/api/v1/{name}/connectivity")
        if connectivity is not None:
            return Ledger(name, connectivity=connectivity, function=_json(session, f"/api/v1/{name}/function"))
    return Ledger(None, "no agent answers connectivity with 200 (see NS-CONN-001)")


def described(route: str, body: Any) -> Any:
    """What must not change between calls: the function, and the graph connectivity describes (its
    ``metadata`` is free-form, "agent-network defined", and may carry live values)."""
    return body.get("connectivity_info") if route == "connectivity" and isinstance(body, dict) else body


JOINED = "the new conversation holds questions other calls of the run asked: from a fresh state it holds others"


def _question(message: dict[str, Any]) -> str | None:
    """The question a history message (``brief``) asks: a HUMAN message's text."""
    return str(message.get("text")) if message.get("type") == "HUMAN" else None


class NeuroSanModel(ModelMachine):
    conversations = Bundle("conversations")

    @property
    def ledger(self) -> Ledger:
        return self.session.ledger  # type: ignore[no-any-return]

    def ready(self) -> bool:
        if self.ledger.agent is None:
            for rid in (CODES, STREAMS, CONVERSATION, DESCRIBED):
                self.session.cannot_compare(rid, self.ledger.why)
            return False
        return True

    # calls ---------------------------------------------------------------------------------------

    @initialize(target=conversations, text=st.sampled_from(TEXTS), chat_filter=st.sampled_from(FILTERS))
    def first_conversation(self, text: str, chat_filter: str | None) -> int:
        """Every sequence chats, then reads the description and provokes every error once: the facts
        that do not depend on the sequence are compared in each, whichever rules it draws later."""
        started = self.chat(text, chat_filter, None)
        self.describe_again()
        for kind in ERRORS:
            self.provoke_error(kind)
        return started

    @rule(target=conversations, text=st.sampled_from(TEXTS), chat_filter=st.sampled_from(FILTERS))
    def new_conversation(self, text: str, chat_filter: str | None) -> int:
        return self.chat(text, chat_filter, None)

    @rule(
        target=conversations, earlier=conversations, text=st.sampled_from(TEXTS), chat_filter=st.sampled_from(FILTERS)
    )
    def continue_conversation(self, earlier: int, text: str, chat_filter: str | None) -> int:
        return self.chat(text, chat_filter, earlier)

    @rule()
    def describe_again(self) -> None:
        if not self.ready():
            return
        name = self.ledger.agent
        for route, first in (("connectivity", self.ledger.connectivity), ("function", self.ledger.function)):
            got = _json(self.session, f"/api/v1/{name}/{route}")
            if got is None or first is None:
                continue  # the status and the form are NS-CONN-001's and NS-FUNC-001's
            self.session.check(
                DESCRIBED,
                described(route, got) == described(route, first),
                lambda got=got, first=first, route=route: (
                    f"{route} of {shown(name)} now answers "  # type: ignore[misc]
                    f"{json.dumps(got)[:300]}; it first answered {json.dumps(first)[:300]}"
                ),
            )
            if route == "connectivity" and isinstance(got, dict):
                # an entry without an origin is NS-CONN-001's finding, not a node described twice
                origins = [
                    o
                    for i in got.get("connectivity_info") or []
                    if isinstance(i, dict) and isinstance(o := i.get("origin"), str)
                ]
                twice = sorted({str(o) for o in origins if origins.count(o) > 1})
                self.session.check(
                    DESCRIBED, not twice, f"connectivity of {shown(name)} describes {twice} more than once"
                )

    @rule(kind=st.sampled_from(ERRORS))
    def provoke_error(self, kind: str) -> None:
        if not self.ready():
            return
        route = next((r for m, r in ROUTES if kind == f"unknown agent {r}"), None)
        if route in ("connectivity", "function"):
            response = self.session.request("GET", f"/api/v1/{UNKNOWN_AGENT}/{route}")
            status_code, raw = response.status, response.body
        else:  # a chat: a server that streams instead of refusing is NS-ERR-001's or NS-ERR-003's finding
            name = UNKNOWN_AGENT if route else self.ledger.agent
            payload = {"json": chat_request("hello")} if route else dict(dict(INVALID_CHAT_BODIES)[kind])
            streamed = self.session.ndjson(
                f"/api/v1/{name}/streaming_chat",
                payload.pop("json", None),
                read_stream=False,
                headers={"Content-Type": "application/json"},
                **payload,
            )
            status_code, raw = streamed.status, streamed.body
        if status_code < 400:
            return  # not an error at all: NS-ERR-001's and NS-ERR-003's subject
        try:
            status = json.loads(raw)
        except (ValueError, UnicodeDecodeError):
            status = None
        code = status.get("code") if isinstance(status, dict) else None
        if not isinstance(code, int) or isinstance(code, bool):
            self.session.cannot_compare(CODES, "an error body is not a Status with an integer code (NS-ERR-002)")
            return
        problems = rpc_code_problems(code, f"{kind}: HTTP {status_code} Status.code")
        if code == 0:
            problems.append(f"{kind}: HTTP {status_code} Status.code is 0, OK, for an error")
        self.session.check(CODES, not problems, "; ".join(problems))

    # a chat --------------------------------------------------------------------------------------

    def chat(self, text: str, chat_filter: str | None, earlier: int | None) -> int:
        if not self.ready():
            return -1
        sent = self.ledger.conversations[earlier] if earlier is not None and earlier >= 0 else None
        if earlier is not None and sent is None:
            return -1  # the conversation it continues could not be started
        body = chat_request(text, chat_filter, sent.context if sent is not None else None)
        streamed = self.session.ndjson(f"/api/v1/{self.ledger.agent}/streaming_chat", body)
        what = (
            f"a chat {'continuing a conversation' if sent else 'starting a conversation'} "
            f"({'no chat_filter' if chat_filter is None else chat_filter})"
        )
        context = self.judge_stream(streamed, what)
        if context is None:
            return -1
        return self.judge_conversation(context, text, sent, what)

    def judge_stream(self, streamed: Streamed, what: str) -> dict[str, Any] | None:
        """The final answer's chat_context, once the stream is judged; None when there is none."""
        if streamed.status != 200:
            self.session.cannot_compare(STREAMS, f"{what} answered {streamed.answer} (NS-STREAM-002)")
            return None
        messages: list[dict[str, Any]] = [m for c in streamed.chunks if isinstance(m := c.get("response"), dict)]
        if streamed.error or not len(messages) == len(streamed.chunks) == len(streamed.events):
            self.session.cannot_compare(STREAMS, f"{what}: the stream is not whole ChatResponses (NS-STREAM-001)")
            return None
        problems = [
            f"message {n + 1} has type {shown(m.get('type'))}"
            for n, m in enumerate(messages)
            if m.get("type") not in MESSAGE_TYPES
        ]
        last: dict[str, Any] = messages[-1] if messages else {}
        context = last.get("chat_context")
        if not messages:
            problems.append("the stream closed without any message")
        elif last.get("type") != ANSWER:
            problems.append(f"the last message is {shown(last.get('type'))}, not {ANSWER}")
        else:
            if not (isinstance(last.get("text"), str) and last["text"].strip()):
                problems.append(f"the final {ANSWER} message has no answer text")
            if not (isinstance(context, dict) and histories(context)):
                problems.append(
                    f"the final {ANSWER} message carries no chat_context with a chat history: "
                    f"{json.dumps(context)[:200]}"
                )
        self.session.check(STREAMS, not problems, f"{what}: " + "; ".join(problems))
        return context if isinstance(context, dict) and histories(context) else None

    def judge_conversation(self, context: dict[str, Any], text: str, sent: Conversation | None, what: str) -> int:
        held = histories(context)
        unsure = ""
        if sent is None:
            front = next((origin for origin, messages in held.items() if asked(messages, text)), None)
            self.session.check(
                CONVERSATION,
                front is not None,
                lambda: (
                    f"{what}: no history of the returned chat_context holds the question "
                    f"{shown(text)} as a HUMAN message: "
                    f"{shown({o: [brief(m) for m in ms] for o, ms in held.items()}, 400)}"
                ),
            )
            if front is None:
                return -1
            problems = turns.started([brief(m) for m in held[front]], text, _question)
            if problems:  # what it joined came from calls outside the finding: a fresh replay shows other ones
                unsure = JOINED
        else:
            front = sent.origin
            history = held.get(front)
            before = [brief(m) for m in sent.history]
            now = [brief(m) for m in history or []]
            problems = (
                [f"the answer has no history of origin {front}"]
                if history is None
                else turns.continued(before, now, text, _question)
            )
            if problems:
                problems[0] = (
                    f"the chat_context sent back held the front man's history {shown(before, 400)}; {problems[0]}: "
                    f"the answer's history should start with the one sent back, then hold the question "
                    f"{shown(text)} as the only HUMAN message after it"
                )
        self.session.check(CONVERSATION, not problems, lambda: f"{what}: " + "; ".join(problems), unsure=unsure)
        if problems:
            return -1
        self.ledger.conversations.append(Conversation(context, front, list(held[front])))
        return len(self.ledger.conversations) - 1


MODEL = Model(NeuroSanModel, prepare, steps=6, calls_per_step=2, requirements=REQUIREMENTS)
