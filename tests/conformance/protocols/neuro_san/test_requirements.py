"""The NeuroSan requirements: the reference mock passes them all, and each fault is caught."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from conformance.check.context import Blocked, CheckFailed, Context, NotVerified
from conformance.check.http import Client, Limits
from conformance.engine.runner import run
from conformance.protocols.neuro_san import requirements as ns
from conformance.run.options import RunOptions
from conformance.run.suites import suite
from conformance.selfcheck.catalogue import run_fault
from conformance.verdicts.results import RunResult, Status
from mockserver import MockConfig
from mockserver.embedded import EmbeddedServer
from mockserver.protocols.neuro_san import FAULTS
from specs.documents import load
from specs.schemas import SchemaSet

PROTOCOL = "neuro-san"
FAULTS_BY_NAME = {f.name: f for f in FAULTS}


def statuses(result: RunResult) -> dict[str, Status]:
    return {r.requirement.id: r.status for r in result.results}


def messages(result: RunResult) -> dict[str, str]:
    return {r.requirement.id: r.message for r in result.results}


# --- the reference mock passes ---------------------------------------------------------------------------


def test_the_registry_has_its_requirements_and_streaming_operation() -> None:
    protocol_suite = suite(PROTOCOL)
    scenario = [c.requirement for c in protocol_suite.registry if c.run is not None]
    assert 12 <= len(scenario) <= 20
    assert protocol_suite.streaming_operations == ("AgentService_StreamingChat",)
    assert all(r.id.startswith("NS-") and r.ref for r in scenario)


# --- fault detail (every fault is caught: tests/conformance/selfcheck/test_catalogue.py) ---------------------------


def test_an_unknown_enum_name_is_reported_at_its_frame() -> None:
    result = run_fault(FAULTS_BY_NAME["ns-message-type-enum"], exact=False)
    message = messages(result)["NS-STREAM-001"]
    assert "streamed object 4" in message and "ASSISTANT" in message


# --- agent discovery -----------------------------------------------------------------------------------------


def test_without_the_concierge_list_the_well_known_agent_is_used() -> None:
    with EmbeddedServer(MockConfig(protocols=(PROTOCOL,), faults=("ns-list-names-only",))) as server:
        result = run(RunOptions(protocol=PROTOCOL, base_url=server.url, phases=("scenario",)))
    found = statuses(result)
    assert found.pop("NS-LIST-001") is Status.FAILED
    assert set(found.values()) == {Status.PASSED}


NO_WELL_KNOWN_AGENT = {
    "stubs": [
        {
            "request": {
                "protocol": PROTOCOL,
                "operation": "AgentService_Connectivity",
                "path": {"agent_name": "hello_world"},
            },
            "response": {"error": {"status": 404, "message": "Agent 'hello_world' not found on this server"}},
        }
    ]
}


def test_a_target_without_agents_reports_agent_requirements_not_verified() -> None:
    # A NeuroSan server (an unknown agent's Status tells it) with no concierge list and no hello_world:
    # no agent to talk to. (Another protocol's server is no NeuroSan server: the preflight says so.)
    config = MockConfig(protocols=(PROTOCOL,), faults=("ns-no-concierge-list",), stubs=NO_WELL_KNOWN_AGENT)
    with EmbeddedServer(config) as server:
        result = run(RunOptions(protocol=PROTOCOL, base_url=server.url, phases=("scenario",), timeout=3))
    assert result.fatal is None, result.fatal
    skipped = {r.requirement.id: r.message for r in result.results if r.status is Status.NOT_VERIFIED}
    assert "NS-CONN-001" in skipped and "NS-CTX-002" in skipped and "NS-STREAM-001" in skipped
    assert all("no agent to test with" in m and "hello_world" in m for m in skipped.values())
    assert result.exit_code == 1  # not verified never counts as passed


# --- the stream's media type in the property-based phase -------------------------------------------------------


def schema_phase_content_type(monkeypatch: pytest.MonkeyPatch, label: str, *faults: str) -> tuple[Status, str, int]:
    """NS-SCHEMA-003 against the mock made to stream as upstream does: labelled ``label``, for every
    agent name (ns-unknown-agent-ok routes it to hello_world) and every schema-valid body (upstream
    answers even a blank text), so that the generated chats reach a stream. Returns the verdict
    and how many streams were opened."""
    from mockserver.protocols.neuro_san import handlers as mock_ns

    streamed: list[str] = []

    def any_text(body: dict[str, Any]) -> str:
        streamed.append(str((body.get("user_message") or {}).get("text")))
        return streamed[-1]

    monkeypatch.setattr(mock_ns, "STREAM_CONTENT_TYPE", label)
    monkeypatch.setattr(mock_ns, "_user_text", any_text)
    with EmbeddedServer(MockConfig(protocols=(PROTOCOL,), faults=("ns-unknown-agent-ok", *faults))) as server:
        result = run(
            RunOptions(
                protocol=PROTOCOL, base_url=server.url, phases=("schema",), only=("NS-SCHEMA-003",), max_examples=3
            )
        )
    [verdict] = result.results
    return verdict.status, verdict.message, len(streamed)


def test_a_json_lines_stream_is_the_documented_stream(monkeypatch: pytest.MonkeyPatch) -> None:
    # The upstream server's label is not an undocumented content type.
    status, message, streams = schema_phase_content_type(monkeypatch, "application/json-lines")
    assert status is Status.PASSED, message
    assert streams >= 5, f"only {streams} generated chat(s) reached a stream: the pass would say little"


def test_a_streams_label_is_the_stream_requirements_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    # one fact, one owner: a stream labelled text/plain fails NS-STREAM-003 (the catalogue's
    # ns-stream-content-type), never the generic content-type requirement too
    status, message, streams = schema_phase_content_type(
        monkeypatch, "application/json-lines", "ns-stream-content-type"
    )
    assert status is Status.PASSED and streams >= 5, message


# --- the checks against hand-made answers ------------------------------------------------------------------------

Handler = Callable[[httpx.Request], httpx.Response]


@pytest.fixture
def make_ctx() -> Iterator[Callable[[Handler], Context]]:
    spec = load(PROTOCOL)
    schemas = SchemaSet(spec.raw)
    made: list[Context] = []

    def build(handler: Handler) -> Context:
        options = RunOptions(protocol=PROTOCOL, base_url="http://target")
        ctx = Context(spec, schemas, options, Limits(timeout=2), {"neuro-san:agent": "hello_world"})
        ctx.client = Client("http://target", ctx.limits, transport=httpx.MockTransport(handler))
        made.append(ctx)
        return ctx

    yield build
    for ctx in made:
        ctx.client.close()


class Chunks(httpx.SyncByteStream):
    """A body delivered in pieces, as a server streams it (a plain ``content=`` is read at once)."""

    def __init__(self, *pieces: bytes) -> None:
        self.pieces = pieces

    def __iter__(self) -> Iterator[bytes]:
        yield from self.pieces


def reply(status: int, body: str, content_type: str = "application/json") -> httpx.Response:
    """Split mid-body, so that the frame reader has to join chunks."""
    raw = body.encode()
    return httpx.Response(status, headers={"Content-Type": content_type}, stream=Chunks(raw[:7], raw[7:]))


def answer(text: str = "hi", **extra: Any) -> dict[str, Any]:
    context = {"chat_histories": [{"messages": [{"type": "HUMAN", "text": "q"}, {"type": "AI", "text": text}]}]}
    return {"response": {"type": "AGENT_FRAMEWORK", "text": text, "chat_context": context, **extra}}


def streaming(body: str, content_type: str = "application/json") -> Handler:
    return lambda request: reply(200, body, content_type)


def line(obj: Any) -> str:
    return json.dumps(obj)


def test_several_objects_on_one_line_are_tolerated(make_ctx: Callable[[Handler], Context]) -> None:
    progress = {"response": {"type": "AGENT_PROGRESS", "text": "working"}}
    ctx = make_ctx(streaming(line(progress) + " " + line(answer()) + "\n", "application/json-lines"))
    ns.stream_framing(ctx)
    ns.stream_ends_with_answer(ctx)
    ns.stream_content_type(ctx)
    assert ctx.failures == []  # a check's parts record their failures instead of raising


def test_an_object_split_across_lines_fails(make_ctx: Callable[[Handler], Context]) -> None:
    ctx = make_ctx(streaming(json.dumps(answer(), indent=1) + "\n"))
    with pytest.raises(CheckFailed, match="line 1 is not a complete JSON object"):
        ns.stream_framing(ctx)


def test_a_frame_without_a_response_message_fails(make_ctx: Callable[[Handler], Context]) -> None:
    ctx = make_ctx(streaming(line({"request": {}}) + "\n" + line(answer()) + "\n"))
    with pytest.raises(CheckFailed, match="streamed object 1 is not a ChatResponse carrying a response message"):
        ns.stream_framing(ctx)


def test_a_trailing_message_after_the_answer_fails(make_ctx: Callable[[Handler], Context]) -> None:
    ctx = make_ctx(streaming(line(answer()) + "\n" + line({"response": {"type": "AI", "text": "x"}}) + "\n"))
    ns.stream_ends_with_answer(ctx)  # each filter is a part of its own: both fail, both are recorded
    assert [m for m, _ in ctx.failures] and all('last streamed message is "AI"' in m for m, _ in ctx.failures)


def test_an_answer_without_text_fails(make_ctx: Callable[[Handler], Context]) -> None:
    # the answer text is NS-STREAM-002's subject: the context check is blocked by it, not failed
    ctx = make_ctx(streaming(line(answer(text="  ")) + "\n"))
    with pytest.raises(Blocked, match="no answer text") as blocked:
        ns.final_carries_context(ctx)
    assert blocked.value.by == "NS-STREAM-002"


def test_a_context_that_forgets_the_first_turn_fails(make_ctx: Callable[[Handler], Context]) -> None:
    """The history grows but drops turn one: growth alone is not continuation."""
    turns: list[int] = []

    def handler(request: httpx.Request) -> httpx.Response:
        turns.append(1)
        text = json.loads(request.content)["user_message"]["text"]
        filler = [{"type": "AI", "text": f"filler {n}"} for n in range(len(turns))]
        history = [*filler, {"type": "HUMAN", "text": text}, {"type": "AI", "text": f"answer {len(turns)}"}]
        body = {"type": "AGENT_FRAMEWORK", "text": f"answer {len(turns)}"}
        body["chat_context"] = {"chat_histories": [{"messages": history}]}  # type: ignore[assignment]
        return reply(200, line({"response": body}))

    with pytest.raises(CheckFailed, match="turn 2: the returned history lost the earlier exchange"):
        ns.context_continues(make_ctx(handler))


def test_error_shapes(make_ctx: Callable[[Handler], Context]) -> None:
    def status_body(body: Any, content_type: str = "application/json") -> Handler:
        return lambda request: reply(404, line(body), content_type)

    def failures(ctx: Context) -> list[str]:
        ns.unknown_agent_status_body(ctx)
        return [message for message, _ in ctx.failures]  # one per route: each is a part of the check

    assert failures(make_ctx(status_body({"code": 5, "message": "no such agent"}))) == []
    for bad in ({"code": True, "message": "x"}, {"message": "x"}, {"code": 5, "message": None}, {"error": "x"}):
        assert len(failures(make_ctx(status_body(bad)))) == 3, bad
    # the Content-Type is NS-SCHEMA-003's subject: a Status body labelled text/html still is a Status
    assert failures(make_ctx(status_body({"code": 5, "message": "x"}, "text/html"))) == []
    ok = make_ctx(lambda request: reply(200, "{}"))
    with pytest.raises(NotVerified, match="NS-ERR-001"):
        ns.unknown_agent_status_body(ok)


def test_history_texts_and_is_status() -> None:
    context = {"chat_histories": [{"messages": [{"text": "a"}, {"type": "AI"}, "junk"]}, "junk", {"messages": None}]}
    assert ns.history_texts(context) == ["a"]
    assert ns.history_texts(None) == [] and ns.history_texts({"chat_histories": None}) == []
    assert ns.is_status({"code": 3, "message": ""})
    assert not ns.is_status({"code": "3", "message": ""}) and not ns.is_status([])
