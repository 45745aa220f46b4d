"""The suite against targets that misbehave: every run ends in bounded time, never passes, and says why.

Each case runs the real runner (``conformance.runner.run``) against a server from ``tests/hostile.py``
with a short timeout. Fatal cases (nothing usable answers: refused, garbage, a root that stalls)
must exit 2; the rest must fail the requirements they touch (exit 1) with a message naming the
misbehaviour. Stream cases give the target a working preamble (``canned`` answers) so the stream
itself is what misbehaves.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path

import httpx
import pytest

from conformance.check.context import CheckFailed, Context
from conformance.check.http import Limits, TargetError
from conformance.run.options import RunOptions
from conformance.run.suites import suite
from conformance.runner import run
from conformance.verdicts.results import RunResult, Status
from specs.documents import load
from specs.schemas import SchemaSet
from tests.hostile import SSE_FRAME, HostileServer, closed_port_url

BOUND_S = 60.0
"""Generous wall-clock bound for one hostile run (they take a few seconds)."""
REPO = Path(__file__).resolve().parents[2]


def run_against(url: str, protocol: str, **overrides: object) -> tuple[RunResult, float]:
    settings: dict[str, object] = {"timeout": 1.0, "max_examples": 2, "budget_s": 60.0, **overrides}
    options = RunOptions(protocol=protocol, base_url=url, **settings)  # type: ignore[arg-type]
    started = time.monotonic()
    result = run(options)
    return result, time.monotonic() - started


def messages(result: RunResult) -> str:
    parts = [result.fatal or ""]
    for r in result.results:
        if r.status is not Status.PASSED:
            parts.append(r.message)
            parts += [e.error or "" for e in r.evidence]
    return "\n".join(parts)


def assert_never_passes(result: RunResult, elapsed: float, exit_code: int, *reasons: str) -> None:
    assert elapsed < BOUND_S, f"run took {elapsed:.1f} s"
    summary = [(r.requirement.id, r.status, r.message) for r in result.results]
    assert result.exit_code == exit_code, (result.fatal, summary)
    assert not result.must_passed
    text = messages(result)
    for reason in reasons:
        assert reason in text, f"{reason!r} not in:\n{text}"


# --- fatal: nothing usable answers (exit 2) ------------------------------------------------------

FATAL_CASES = [
    # (behaviour or None for connection refused, protocol, what the fatal message must say)
    (None, "agent-protocol", ("target unreachable", "cannot connect", "Connection refused")),
    ("garbage", "synapse-agent", ("not speaking HTTP", "broke the HTTP exchange", "illegal status line")),
    ("stall_headers", "sgr-agent-core", ("sent nothing for 1 s (stalled)",)),
    ("stall_mid_stream", "neuro-san", ("stalled mid-body",)),
    ("reset_before_response", "agent-protocol", ("connection reset",)),
    ("huge", "synapse-agent", ("exceeds the 8388608-byte cap",)),
]


@pytest.mark.parametrize(
    ("behaviour", "protocol", "reasons"), FATAL_CASES, ids=[f"{b or 'refused'}-{p}" for b, p, _ in FATAL_CASES]
)
def test_unusable_target_is_fatal(behaviour: str | None, protocol: str, reasons: tuple[str, ...]) -> None:
    server: AbstractContextManager[str] = HostileServer(behaviour) if behaviour else nullcontext(closed_port_url())
    with server as url:
        result, elapsed = run_against(url, protocol)
    assert_never_passes(result, elapsed, 2, *reasons)
    # nothing is run, so nothing can pass: every requirement stays "not verified (not run)"
    assert result.results and all(r.status is Status.SKIPPED and "(not run)" in r.message for r in result.results)
    if isinstance(server, HostileServer):
        assert server.requests, "the target was never contacted"


# --- the requirements meet the misbehaviour (exit 1) ---------------------------------------------

CHECK_CASES = [
    # (behaviour, whether GET / must answer properly for the preflight to pass, what the failure says)
    ("stall_headers", True, ("sent nothing for 1 s (stalled)",)),
    ("stall_mid_stream", True, ("stalled mid-body",)),
    ("reset", True, ("connection reset",)),
    ("endless", True, ("exceeds the 8388608-byte cap",)),
    ("huge", True, ("response body of 4294967296 bytes (Content-Length) exceeds",)),
    ("trickle", True, ("(trickling)",)),
    ("garbage", True, ("broke the HTTP exchange",)),
    # these answer HTTP on every path, the root included
    ("invalid_utf8", False, ("not valid JSON", "can't decode byte 0xff")),
    ("invalid_json", False, ("not valid JSON", "Unterminated string")),
    ("redirect_loop", False, ("got 302", "a redirect to '/ap/v1/agent/tasks'")),
    ("rate_limited", False, ("got 429", "Retry-After: 3600")),
    ("unavailable", False, ("got 503", "Retry-After: 3600")),
]


@pytest.mark.parametrize(("behaviour", "healthy_root", "reasons"), CHECK_CASES, ids=[c[0] for c in CHECK_CASES])
def test_misbehaviour_fails_the_requirement(behaviour: str, healthy_root: bool, reasons: tuple[str, ...]) -> None:
    server = HostileServer(behaviour, healthy_root=healthy_root)
    with server as url:
        result, elapsed = run_against(url, "agent-protocol", phases=("scenario",), only=("AP-TASK-001",))
    assert_never_passes(result, elapsed, 1, *reasons)
    assert result.fatal is None
    [res] = result.results
    assert res.requirement.id == "AP-TASK-001"
    assert res.status is Status.FAILED
    assert res.evidence and res.evidence[-1].url.endswith("/ap/v1/agent/tasks")
    assert "POST /ap/v1/agent/tasks" in server.requests


def test_huge_body_is_never_read_in_full() -> None:
    server = HostileServer("huge", healthy_root=True)
    with server as url:
        run_against(url, "agent-protocol", phases=("scenario",), only=("AP-TASK-001",))
    assert server.bytes_sent < 64 << 20  # of an announced 4 GiB


# --- with the property-based phase too -----------------------------------------------------------


@pytest.mark.parametrize(
    ("behaviour", "reasons"),
    [
        ("unavailable", ("Server error", "got 503")),
        ("invalid_json", ("JSON deserialization error", "not valid JSON")),
        ("reset_before_response", ("no usable answer", "connection reset")),
    ],
)
def test_full_run_fails_in_both_phases(behaviour: str, reasons: tuple[str, ...]) -> None:
    with HostileServer(behaviour, healthy_root=behaviour == "reset_before_response") as url:
        result, elapsed = run_against(url, "agent-protocol", only=("AP-TASK-001", "AP-SCHEMA"))
    assert_never_passes(result, elapsed, 1, *reasons)
    schema = [r for r in result.results if r.requirement.phase == "schema"]
    assert schema, "the schema phase reported nothing"
    assert any(r.status is not Status.PASSED and r.requirement.level.value == "must" for r in schema)


def test_stalling_target_is_bounded_by_the_budget() -> None:
    """Every generated request stalls; the property-based phase stops at its share of the budget."""
    with HostileServer("stall_headers", healthy_root=True) as url:
        result, elapsed = run_against(url, "agent-protocol", only=("AP-TASK-001", "AP-SCHEMA"), budget_s=6)
    assert elapsed < 6 + 3  # the watchdog ends the exchange in flight when the budget runs out
    assert_never_passes(result, elapsed, 1, "not verified (budget)")
    schema = [r for r in result.results if r.requirement.phase == "schema"]
    assert schema and all(r.status is Status.SKIPPED and "not verified (budget)" in r.message for r in schema)


# --- streams ---------------------------------------------------------------------------------------

NS_PREAMBLE: dict[str, tuple[int, object]] = {
    "GET /api/v1/list": (404, {"code": 5, "message": "Not Found"}),
    "GET /api/v1/hello_world/connectivity": (200, {"connectivity_info": [], "metadata": {}}),
}
SGR_PREAMBLE: dict[str, tuple[int, object]] = {
    "GET /health": (200, {"status": "healthy", "service": "SGR Agent Core API"}),
    "GET /v1/models": (
        200,
        {"object": "list", "data": [{"id": "sgr_agent", "object": "model", "created": 0, "owned_by": "sgr"}]},
    ),
    "GET /agents": (200, {"agents": [], "total": 0}),
}

STREAM_CASES = [
    ("stall_mid_stream", ("stream stalled: nothing received for 1 s",)),
    ("endless", ("more than 10000",)),
    ("reset", ("reset",)),
    ("invalid_utf8", ("not valid UTF-8",)),
    ("invalid_json", ("line 1 is not a complete JSON object",)),
]


def stream_ids(protocol: str) -> tuple[str, ...]:
    ids = tuple(
        c.requirement.id for c in suite(protocol).registry if c.run is not None and "-STREAM-" in c.requirement.id
    )
    if not ids:
        pytest.skip(f"{protocol} registers no -STREAM- requirements yet")
    return ids


@pytest.mark.parametrize(("behaviour", "reasons"), STREAM_CASES, ids=[c[0] for c in STREAM_CASES])
def test_neuro_san_stream_misbehaviour(behaviour: str, reasons: tuple[str, ...]) -> None:
    only = stream_ids("neuro-san")
    with HostileServer(behaviour, healthy_root=True, canned=NS_PREAMBLE) as url:
        result, elapsed = run_against(url, "neuro-san", phases=("scenario",), only=only)
    assert_never_passes(result, elapsed, 1, *reasons)
    framing = next(r for r in result.results if r.requirement.id == only[0])
    assert framing.status is Status.FAILED, framing.message


SGR_STREAM_CASES = [
    ("stall_mid_stream", ("stream stalled: nothing received for 1 s",)),
    ("endless", ("more than 10000 events",)),
    ("reset", ("reset",)),
    ("invalid_utf8", ("event 1 is not valid UTF-8",)),
    ("invalid_json", ("not a JSON",)),
]


@pytest.mark.parametrize(("behaviour", "reasons"), SGR_STREAM_CASES, ids=[c[0] for c in SGR_STREAM_CASES])
def test_sgr_stream_misbehaviour(behaviour: str, reasons: tuple[str, ...]) -> None:
    only = stream_ids("sgr-agent-core")
    with HostileServer(
        behaviour, healthy_root=True, canned=SGR_PREAMBLE, frame=SSE_FRAME, content_type="text/event-stream"
    ) as url:
        result, elapsed = run_against(url, "sgr-agent-core", phases=("scenario",), only=only)
    assert_never_passes(result, elapsed, 1, *reasons)
    assert all(r.status is not Status.PASSED for r in result.results)


# --- frame readers over a real hostile socket, through Context.frames -----------------------------


@pytest.mark.parametrize(
    ("kind", "behaviour", "error", "reason"),
    [
        ("ndjson", "stall_mid_stream", TargetError, "stream stalled"),
        ("ndjson", "endless", CheckFailed, "more than 10000 frames"),
        ("ndjson", "invalid_utf8", CheckFailed, "line 1 is not valid UTF-8"),
        ("ndjson", "invalid_json", CheckFailed, "line 1 is not a complete JSON object"),
        ("ndjson", "reset", TargetError, "reset"),
        ("sse", "stall_mid_stream", TargetError, "stream stalled"),
        ("sse", "endless", CheckFailed, "more than 10000 events"),
        ("sse", "invalid_utf8", CheckFailed, "event 1 is not valid UTF-8"),
        ("sse", "reset", TargetError, "reset"),
    ],
)
def test_context_frames_against_hostile_streams(kind: str, behaviour: str, error: type[Exception], reason: str) -> None:
    sse = kind == "sse"
    server = HostileServer(
        behaviour,
        frame=SSE_FRAME if sse else b'{"response": {"type": "AI"}}\n',
        content_type="text/event-stream" if sse else "application/json",
    )
    with server as url:
        protocol = "sgr-agent-core" if sse else "neuro-san"
        spec = load(protocol)
        ctx = Context(
            spec,
            SchemaSet(spec.raw),
            RunOptions(protocol=protocol, base_url=url),
            Limits(timeout=1.0, stream_seconds=10),
        )
        frames = 0
        started = time.monotonic()
        with pytest.raises(error, match=reason), ctx.client.stream("POST", "/chat", json={}) as stream:
            for _ in ctx.frames(stream, kind):
                frames += 1
        assert time.monotonic() - started < 10
    if behaviour == "stall_mid_stream":
        assert frames == 1  # the frame before the stall was delivered as it arrived
    if behaviour == "endless":
        assert frames == 10_000


# --- the CLI end to end ----------------------------------------------------------------------------


def test_cli_unreachable_target_exits_2(tmp_path: Path) -> None:
    url = closed_port_url()
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    started = time.monotonic()
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "conformance",
            "run",
            "--protocol",
            "agent-protocol",
            "--base-url",
            url,
            "--timeout",
            "1",
            "--report-dir",
            str(tmp_path / "r"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        env=env,
    )
    assert time.monotonic() - started < BOUND_S
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert f"target unreachable or not speaking HTTP: cannot connect to {url}/" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert "agent-protocol: FAIL" in proc.stdout
    assert (tmp_path / "r" / "results.json").is_file()  # the failed run is still reported


# --- stalls past the preflight, inside the property-based phase ----------------------------------


def from_the_mock(protocol: str, *routes: str) -> dict[str, tuple[int, object]]:
    """The reference mock's own answers to ``routes`` ("GET /path"), canned for a hostile target: its
    first routes then behave exactly as a conforming server's would."""
    from mockserver import EmbeddedServer, MockConfig

    base_path = load(protocol).info.base_path
    canned: dict[str, tuple[int, object]] = {}
    with EmbeddedServer(MockConfig(protocols=(protocol,), seed=1)) as server:
        for route in routes:
            method, path = route.split(" ", 1)
            body = {"input": "write hello"} if method == "POST" else None  # the one POST: an Agent Protocol task
            got = httpx.request(
                method, server.url + base_path + path, json=body, headers={"Authorization": "Bearer alice-token"}
            )
            canned[f"{method} {base_path}{path}"] = (got.status_code, got.json())
    return canned


STALL_BOUND_S = 150.0
"""A run against a target that stalls on every deeper route, at a 1 s timeout and the default
budget: bounded by two stalls per route, not by the budget (well under a minute on a quiet machine)."""

NDJSON_LINES = ("application/json-lines", b'{"response": {"type": "AI", "text": "hello"}}\n')
SSE = ("text/event-stream", SSE_FRAME)
PHASE_STALL_CASES = [
    # (behaviour, protocol, routes answered as the mock answers them, stream type and frame,
    #  the requirements of those routes, which must be decided and pass)
    ("stall_headers", "agent-protocol", ("POST /ap/v1/agent/tasks",), None, ("AP-TASK-001",)),  # headers never sent
    ("stall_mid_stream", "agent-protocol", ("POST /ap/v1/agent/tasks",), None, ("AP-TASK-001",)),  # a body that stops
    ("trickle", "agent-protocol", ("POST /ap/v1/agent/tasks",), None, ("AP-TASK-001",)),  # one byte at a time
    ("slow", "agent-protocol", ("POST /ap/v1/agent/tasks",), None, ("AP-TASK-001",)),  # each call answers after 3 s
    # an event stream that sends one event and stops, on every route but the two documented reads
    ("stall_mid_stream", "sgr-agent-core", ("GET /health", "GET /v1/models"), SSE, ("SGR-SVC-001", "SGR-MODEL-001")),
    # an endless json-lines stream on every route but the agent's two descriptions
    (
        "endless",
        "neuro-san",
        ("GET /api/v1/hello_world/connectivity", "GET /api/v1/hello_world/function"),
        NDJSON_LINES,
        ("NS-CONN-001", "NS-FUNC-001"),
    ),
]


@pytest.mark.parametrize(
    ("behaviour", "protocol", "routes", "stream", "decided"),
    PHASE_STALL_CASES,
    ids=[f"{c[0]}-{c[1]}" for c in PHASE_STALL_CASES],
)
def test_stalls_in_the_property_based_phase_cost_two_timeouts_per_route(
    behaviour: str,
    protocol: str,
    routes: tuple[str, ...],
    stream: tuple[str, bytes] | None,
    decided: tuple[str, ...],
) -> None:
    ctype, frame = stream or ("application/json", b'{"task_id": "t1"}\n')
    canned = from_the_mock(protocol, *routes)
    server = HostileServer(behaviour, healthy_root=True, canned=canned, frame=frame, content_type=ctype)
    registry = suite(protocol).registry
    schema_prefix = next(c.requirement.id for c in registry if c.requirement.phase == "schema").rsplit("-", 1)[0]
    with server as url:
        base = url + load(protocol).info.base_path
        result, elapsed = run_against(base, protocol, only=(schema_prefix, *decided), max_examples=10, budget_s=600.0)
    assert elapsed < STALL_BOUND_S, f"run took {elapsed:.1f} s"
    assert result.fatal is None and result.stopped is None, (result.fatal, result.stopped)
    stalled = result.stats["schema_stalled_routes"]
    assert stalled, "no route was seen to stall"
    # after two stalls a route gets no more generated cases: they are refused unsent, at once
    assert sum(o["cases_not_sent"] for o in stalled.values()) > 0, stalled
    assert all(o["stalls"] <= 2 + 4 for o in stalled.values()), stalled  # two, plus those already in flight
    verdicts = {r.requirement.id: r for r in result.results}
    # the routes that behave are decided, and pass, though the property-based phase met the stalls first
    for rid in decided:
        assert verdicts[rid].status is Status.PASSED, (rid, verdicts[rid].message)
    # nothing unfinished reads passed, and every requirement has a verdict with its reason
    for res in result.results:
        assert "(not run)" not in res.message and "(budget)" not in res.message, res.message
        if res.requirement.phase == "schema":  # most routes never answered: nothing generic can pass
            assert res.status is not Status.PASSED, res.message
    assert not result.must_passed


# --- a verdict raised outside any requirement decides the phase, never a traceback ---------------


@pytest.mark.parametrize("protocol", ["agent-protocol", "sgr-agent-core"])
@pytest.mark.parametrize("behaviour", ["invalid_json", "invalid_utf8"])
def test_the_model_phase_takes_an_answer_that_is_not_json_as_its_verdict(protocol: str, behaviour: str) -> None:
    """The model phase's preparation and steps read answers as JSON outside any requirement; a target
    answering bodies that are not JSON (or not UTF-8) past the preflight makes every model
    requirement an error that says so (it used to end the run in a CheckFailed traceback)."""
    with HostileServer(behaviour, healthy_root=True) as url:
        result, elapsed = run_against(url, protocol, phases=("model",))
    model = [r for r in result.results if r.requirement.phase == "model"]
    assert model and elapsed < BOUND_S
    for r in model:
        assert r.status is Status.ERROR, (r.requirement.id, r.status, r.message)
        assert "response body is not valid JSON" in r.message, r.message
    assert result.exit_code == 1 and not result.must_passed
