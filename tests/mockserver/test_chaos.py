"""Chaos rules: seeded and reproducible, per protocol and operation, each effect in the protocol's
own terms, bounded, and refused with a clear message when they cannot apply."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import httpx
import pytest

from mockserver import EmbeddedServer
from mockserver.chaos import MAX_RULES, STREAMED, Chaos, ChaosError, Rule, error_frame, load_document, parse_cli
from scripts.fuzz_mock import shape_problem
from specs.documents import read_manifest
from tests.facts import facts, mocked, stream_of, streamed

Serve = Callable[..., AbstractContextManager[EmbeddedServer]]
OPS = {
    "agent-protocol": ["listAgentTasks", "createAgentTask"],
    "sgr-agent-core": ["createChatCompletion"],
    "neuro-san": ["AgentService_StreamingChat"],
    "synapse-agent": ["getAgentChatResult"],
}
AUTH = {"Authorization": "Bearer alice-token"}
CHAT = {"model": "sgr_agent", "stream": True, "messages": [{"role": "user", "content": "research owls please"}]}
NS_CHAT = {"user_message": {"type": "HUMAN", "text": "hello"}, "chat_filter": {"chat_filter_type": "MAXIMAL"}}


def _draws(seed: int, n: int = 40) -> list[bool]:
    chaos = Chaos([Rule.parse({"error": 503, "rate": 0.5}, OPS)], seed)
    return [chaos.decide("agent-protocol", "listAgentTasks") is not None for _ in range(n)]


def test_the_same_seed_gives_the_same_chaos() -> None:
    assert _draws(7) == _draws(7)
    assert _draws(7) != _draws(8)
    assert 5 < sum(_draws(7)) < 35  # a rate, not all or nothing


def test_rules_match_protocol_and_operation() -> None:
    chaos = Chaos([Rule.parse({"protocol": "agent-protocol", "operation": "createAgentTask", "error": 500}, OPS)])
    assert chaos.decide("agent-protocol", "listAgentTasks") is None
    assert chaos.decide("sgr-agent-core", "createChatCompletion") is None
    decision = chaos.decide("agent-protocol", "createAgentTask")
    assert decision is not None and decision.error == 500


@pytest.mark.parametrize(
    ("latency", "low", "high"),
    [
        ({"fixed": 0.25}, 0.25, 0.25),
        ({"uniform": [0.1, 0.2]}, 0.1, 0.2),
        ({"lognormal": {"median": 0.1, "sigma": 0.5}}, 0.0, 60.0),
    ],
)
def test_latency_distributions(latency: dict[str, Any], low: float, high: float) -> None:
    chaos = Chaos([Rule.parse({"latency": latency}, OPS)], 3)
    delays = [d.delay for d in (chaos.decide("agent-protocol", "listAgentTasks") for _ in range(200)) if d]
    assert len(delays) == 200 and all(low <= d <= high for d in delays)
    if "lognormal" in latency:
        median = sorted(delays)[100]
        assert 0.07 < median < 0.14  # centred on the median asked for
        assert max(delays) > 0.15  # with a tail


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "protocol=sgr-agent-core,error=429,rate=0.5,retry-after=2",
            {"protocol": "sgr-agent-core", "error": 429, "rate": 0.5, "retry_after": 2},
        ),
        ("latency=0.2", {"latency": 0.2}),
        ("latency=uniform:0.1:0.3", {"latency": {"uniform": [0.1, 0.3]}}),
        (
            "latency=lognormal:0.05:0.5,operation=createAgentTask",
            {"latency": {"lognormal": {"median": 0.05, "sigma": 0.5}}, "operation": "createAgentTask"},
        ),
        ("protocol=neuro-san,drip=0.1,cut_after=2", {"protocol": "neuro-san", "drip": 0.1, "cut_after": 2}),
        ("reset=true", {"reset": True}),
    ],
)
def test_command_line_form(text: str, expected: dict[str, Any]) -> None:
    assert parse_cli(text) == expected
    Rule.parse(expected, OPS)  # and it is a valid rule


@pytest.mark.parametrize(
    ("rule", "message"),
    [
        ({"protocol": "nope", "error": 500}, "not served"),
        ({"operation": "nope", "error": 500}, "no served protocol"),
        ({"error": 404}, "error must be one of 429, 500, 503"),
        ({"error": 500, "retry_after": 3}, "retry_after goes with"),
        ({"rate": 1.5, "error": 500}, "rate must be between"),
        ({"latency": {"fixed": 3600}}, "between 0 and 60"),
        ({"latency": {"gamma": 1}}, "unknown latency distribution"),
        ({"latency": {"uniform": [0.5, 0.1]}}, "above HIGH"),
        ({"protocol": "agent-protocol"}, "needs an effect"),
        ({"protocol": "synapse-agent", "drip": 0.1}, "streams nothing"),
        ({"cut_after": 1, "error_frame_after": 1}, "either cut"),
        ({"colour": "red", "error": 500}, "unknown rule field"),
    ],
)
def test_bad_rules_are_refused_with_the_reason(rule: dict[str, Any], message: str) -> None:
    with pytest.raises(ChaosError, match=message):
        Rule.parse(rule, OPS)


def test_rule_count_is_bounded() -> None:
    with pytest.raises(ChaosError, match=f"at most {MAX_RULES}"):
        load_document({"rules": [{"error": 500}] * (MAX_RULES + 1)}, OPS)


@pytest.mark.parametrize("protocol", mocked())
@pytest.mark.parametrize("status", [429, 503, 500])
def test_errors_in_the_protocols_own_shape(serve: Serve, protocol: str, status: int) -> None:
    call = facts(protocol).served
    with serve(protocols=(protocol,), chaos=({"error": status},)) as server, httpx.Client(base_url=server.url) as c:
        answer = c.request(call.method, call.path, json=call.json, headers=call.headers)
        assert answer.status_code == status
        problem = shape_problem(protocol, status, answer.headers.get("content-type", ""), answer.content)
        assert problem is None, problem
        assert ("Retry-After" in answer.headers) == (status in (429, 503))


def test_latency_is_added(serve: Serve) -> None:
    with (
        serve(protocols=("sgr-agent-core",), chaos=({"operation": "health", "latency": 0.3},)) as server,
        httpx.Client(base_url=server.url) as c,
    ):
        started = time.monotonic()
        assert c.get("/health").status_code == 200
        assert time.monotonic() - started >= 0.3
        started = time.monotonic()
        c.get("/v1/models")  # another operation: no delay
        assert time.monotonic() - started < 0.3


def test_connection_reset(serve: Serve) -> None:
    with (
        serve(protocols=("agent-protocol",), chaos=({"operation": "getAgentTask", "reset": True},)) as server,
        httpx.Client(base_url=server.url) as c,
    ):
        with pytest.raises(httpx.TransportError):
            c.get("/ap/v1/agent/tasks/x")
        assert c.get("/ap/v1/agent/tasks").status_code == 200  # the server keeps serving


def frames(answer: httpx.Response, kind: str) -> Iterator[Any]:
    """Each frame as it is read: its JSON (an SSE ``data:`` line, or an NDJSON line), SSE's
    ``[DONE]`` as it is."""
    for line in answer.iter_lines():
        if not line or line.startswith(":"):
            continue
        yield line if kind == "sse" and line == "data: [DONE]" else json.loads(line.removeprefix("data: "))


@pytest.mark.parametrize("protocol", streamed())
def test_stream_cut_after_n_frames(serve: Serve, protocol: str) -> None:
    stream = stream_of(protocol)
    read: list[Any] = []
    with (
        serve(protocols=(protocol,), chaos=({"protocol": protocol, "cut_after": 2},)) as server,
        httpx.Client(base_url=server.url) as c,
        pytest.raises(httpx.RemoteProtocolError),
        c.stream("POST", stream.call.path, json=stream.call.json, headers=stream.call.headers) as r,
    ):
        assert r.status_code == 200
        for frame in frames(r, stream.kind):
            read.append(frame)
    assert len(read) == 2 and "data: [DONE]" not in read


def like(template: Any, value: Any) -> bool:
    """``value`` has the template's shape, any string where the template has ``MESSAGE``."""
    if template == MESSAGE:
        return isinstance(value, str)
    if isinstance(template, dict):
        return (
            isinstance(value, dict)
            and set(value) == set(template)
            and all(like(template[k], value[k]) for k in template)
        )
    if isinstance(template, list):
        return isinstance(value, list) and len(value) == len(template) and all(map(like, template, value))
    return bool(template == value)


MESSAGE = "\x00message"


@pytest.mark.parametrize("protocol", streamed())
def test_error_frame_inside_a_200_stream(serve: Serve, protocol: str) -> None:
    """The protocol's own in-band error (its manifest's stream_error) after the first frame, then the end."""
    stream = stream_of(protocol)
    rule = {"protocol": protocol, "error_frame_after": 1}
    with serve(protocols=(protocol,), chaos=(rule,)) as server, httpx.Client(base_url=server.url) as c:
        with c.stream("POST", stream.call.path, json=stream.call.json, headers=stream.call.headers) as r:
            assert r.status_code == 200
            read = list(frames(r, stream.kind))
        assert len(read) == 2
        assert like(error_frame(protocol, MESSAGE), read[1]), read[1]


def test_neuro_san_error_frame_and_drip(serve: Serve) -> None:
    rule = {"protocol": "neuro-san", "drip": 0.2, "error_frame_after": 2}
    with serve(protocols=("neuro-san",), chaos=(rule,)) as server, httpx.Client(base_url=server.url) as c:
        started = time.monotonic()
        with c.stream("POST", "/api/v1/hello_world/streaming_chat", json=NS_CHAT) as r:
            lines = [json.loads(line) for line in r.iter_lines() if line]
        assert time.monotonic() - started >= 0.4  # two drips before the third frame
        assert len(lines) == 3 and lines[2] == {
            "error": {"code": 14, "message": lines[2]["error"]["message"], "details": []}
        }


def test_a_streams_error_frame_is_its_manifests(tmp_path: Path) -> None:
    """The frame a protocol's streams carry is declared in its protocol.yaml, so a streamed protocol
    added from its own folders gets chaos's stream effects without a table here."""
    assert STREAMED == ("neuro-san", "sgr-agent-core")
    assert error_frame("neuro-san", "down") == {"error": {"code": 14, "message": "down", "details": []}}
    assert error_frame("sgr-agent-core", "down")["error"] == {
        "message": "down",
        "type": "server_error",
        "code": "service_unavailable",
    }
    manifest = tmp_path / "protocol.yaml"
    manifest.write_text(
        "id: streamy\ntitle: S\ndocument: openapi.yaml\nprefix: ST\n"
        "stream_error: {event: error, data: [{why: $message}, $message]}\n",
        encoding="utf-8",
    )
    info = read_manifest(manifest, tmp_path)
    assert info.stream_error_frame("gone") == {"event": "error", "data": [{"why": "gone"}, "gone"]}
    assert info.stream_error is not None and info.stream_error["data"][1] == "$message"  # the template kept
    with pytest.raises(KeyError, match="synapse-agent declares no stream_error"):
        error_frame("synapse-agent", "down")


def test_rules_changed_at_run_time(serve: Serve) -> None:
    with serve(protocols=("agent-protocol",)) as server, httpx.Client(base_url=server.url) as c:
        assert c.get("/__mock/chaos").json() == {"seed": 0, "rules": []}
        put = c.put("/__mock/chaos", json={"seed": 4, "rules": [{"operation": "listAgentTasks", "error": 503}]})
        assert put.status_code == 200 and put.json()["seed"] == 4
        assert c.get("/ap/v1/agent/tasks").status_code == 503
        added = c.post("/__mock/chaos/rules", json={"operation": "createAgentTask", "error": 500})
        assert len(added.json()["rules"]) == 2
        assert c.post("/ap/v1/agent/tasks", json={}).status_code == 500
        bad = c.post("/__mock/chaos/rules", json={"operation": "createAgentTask", "error": 418})
        assert bad.status_code == 400 and "418" in bad.json()["error"]
        assert len(c.get("/__mock/chaos").json()["rules"]) == 2  # a refused rule changes nothing
        assert c.delete("/__mock/chaos").json()["rules"] == []
        assert c.get("/ap/v1/agent/tasks").status_code == 200


def test_chaos_is_journalled(serve: Serve) -> None:
    with (
        serve(protocols=("agent-protocol",), journal=10, chaos=({"error": 429, "latency": 0.01},)) as server,
        httpx.Client(base_url=server.url) as c,
    ):
        c.post("/ap/v1/agent/tasks", json={"input": "x"})
        (entry,) = c.get("/__mock/journal").json()["entries"]
        assert entry["response"]["status"] == 429 and entry["request"]["body"]["text"] == '{"input":"x"}'
        assert entry["chaos"] == ["latency 10 ms", "error 429"]
