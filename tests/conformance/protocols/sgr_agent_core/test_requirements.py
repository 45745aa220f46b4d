"""The SGR Agent Core requirements: the reference mock passes them all, each fault is caught, and
the clarification checks report "not verified" (never passed) against an agent that never asks."""

from __future__ import annotations

import re
from collections.abc import Iterator

import httpx
import pytest

from conformance.check.context import Blocked, CheckFailed, Context
from conformance.check.http import Limits
from conformance.engine.runner import run
from conformance.protocols.sgr_agent_core import requirements as sgr
from conformance.run.options import RunOptions
from conformance.run.suites import suite
from conformance.selfcheck.catalogue import run_fault
from conformance.verdicts.requirements import Authority
from conformance.verdicts.results import Exchange, RunResult, Status
from mockserver import MockConfig
from mockserver.embedded import EmbeddedServer
from mockserver.protocols.sgr_agent_core import FAULTS
from mockserver.protocols.sgr_agent_core import models as mock
from specs.documents import load
from specs.schemas import SchemaSet

PROTOCOL = "sgr-agent-core"
FAULTS_BY_NAME = {f.name: f for f in FAULTS}
SLOW = {"sgr-stall-mid-stream", "sgr-state-stuck"}
"""Faults that make the suite wait for its time bound: run with timeout=2."""


def statuses(result: RunResult) -> dict[str, Status]:
    return {r.requirement.id: r.status for r in result.results}


def problems(result: RunResult) -> dict[str, str]:
    return {r.requirement.id: f"{r.status.value}: {r.message}" for r in result.results if r.status is not Status.PASSED}


# --- the reference mock passes ----------------------------------------------------------------


def test_the_registry() -> None:
    protocol_suite = suite(PROTOCOL)
    scenario = [c.requirement for c in protocol_suite.registry if c.run is not None]
    assert 12 <= len(scenario) <= 24
    assert all(re.fullmatch(r"SGR-[A-Z]+-\d{3}", r.id) and r.ref for r in scenario)
    # what only upstream practice fixes gives advice, never a failure
    assert {r.id for r in scenario if r.authority is Authority.PRACTICE} == {"SGR-STREAM-008", "SGR-ERR-005"}
    # the schema phase validates the SSE events itself (itemSchema), so nothing is skipped there
    assert protocol_suite.streaming_operations == ()
    assert protocol_suite.schema_expected_statuses == {
        "createChatCompletion": {"not_a_server_error": ("501",), "positive_data_acceptance": ("400",)}
    }


# --- fault detail (every fault is caught: tests/conformance/selfcheck/test_catalogue.py) ------------------


def test_a_stall_is_reported_within_the_time_bound() -> None:
    result = run_fault(FAULTS_BY_NAME["sgr-stall-mid-stream"], timeout=2.0, exact=False)
    stalled = next(r for r in result.results if r.requirement.id == "SGR-STREAM-007")
    assert "stalled" in stalled.message


# --- clarification is never passed by default -------------------------------------------------


def test_an_agent_that_never_asks_leaves_clarification_not_verified(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(mock, "_CLARIFY", re.compile(r"(?!)"))  # the mock's trigger word no longer matches
    with EmbeddedServer(MockConfig(protocols=(PROTOCOL,))) as server:
        result = run(RunOptions(protocol=PROTOCOL, base_url=server.url, only=("SGR-CLAR-",), phases=("scenario",)))
    assert statuses(result) == {"SGR-CLAR-001": Status.NOT_VERIFIED, "SGR-CLAR-002": Status.NOT_VERIFIED}
    assert all("did not ask for a clarification" in r.message for r in result.results)
    assert result.exit_code == 1  # a MUST that is not verified is not passed


# --- helpers ----------------------------------------------------------------------------------


@pytest.fixture
def ctx() -> Iterator[Context]:
    spec = load(PROTOCOL)
    context = Context(spec, SchemaSet(spec.raw), RunOptions(protocol=PROTOCOL), Limits())
    yield context
    context.client.close()


def recorded(events: list[str], error: str = "", status: int = 200) -> sgr.Recorded:
    exchange = Exchange("POST", "http://target/v1/chat/completions", {}, None)
    return sgr.Recorded(status, httpx.Headers({"X-Agent-ID": "a"}), "text/event-stream", exchange, events, error=error)


@pytest.mark.parametrize(
    ("events", "error", "message"),
    [
        (["{}", "[DONE]"], "", None),
        (["{}"], "", "without data: [DONE]"),
        (["{}", "[DONE]", "{}"], "", "events after data: [DONE]"),
        (["{}"], "stream stalled: nothing received for 2 s", "did not complete after 1 event"),
        ([], "", "without data: [DONE]"),
    ],
)
def test_expect_complete(ctx: Context, events: list[str], error: str, message: str | None) -> None:
    rec = recorded(events, error)
    if message is None:
        sgr.expect_complete(ctx, rec)
        return
    # SGR-STREAM-007's own check fails; any other check that needs a finished stream is blocked by it
    # only when the stream did not end: one the server closed (without [DONE], or with events after
    # it) is there to judge, and its [DONE] is SGR-STREAM-007's finding alone
    with pytest.raises(CheckFailed, match=re.escape(message)):
        sgr.expect_complete(ctx, rec, owner=None)
    if not error:
        sgr.expect_complete(ctx, rec)
        return
    with pytest.raises(Blocked, match=re.escape(message)) as blocked:
        sgr.expect_complete(ctx, rec)
    assert blocked.value.by == "SGR-STREAM-007"


def test_expect_complete_names_a_non_200_answer(ctx: Context) -> None:
    rec = recorded([], status=400)
    rec.body = b'{"detail": "Invalid model"}'
    with pytest.raises(Blocked, match=r"got 400: .*Invalid model") as blocked:
        sgr.expect_complete(ctx, rec)
    assert blocked.value.by == "SGR-STREAM-001"


@pytest.mark.parametrize(
    ("chunk", "reason"),
    [
        ({"choices": [{"finish_reason": "stop"}]}, "stop"),
        ({"choices": []}, None),
        ({"choices": "x"}, None),
        ({}, None),
    ],
)
def test_finish_reason(chunk: dict[str, object], reason: str | None) -> None:
    assert sgr.finish_reason(chunk) == reason


def test_record_validates_each_event_as_it_arrives(ctx: Context) -> None:
    """The first invalid event is named even when later ones are fine and the stream completes."""
    with EmbeddedServer(MockConfig(protocols=(PROTOCOL,), faults=("sgr-wrong-chunk-object",))) as server:
        ctx.client.base_url = server.url
        rec = sgr.record(ctx, sgr.CHAT, {"model": "sgr_agent", "messages": [sgr.user("solar panels")]})
    assert rec.problem.startswith("event 1 is not a chat.completion.chunk")
    assert "chat.completion" in rec.problem
    assert rec.events[-1] == "[DONE]" and rec.error == ""
    assert len(rec.chunks) == len(rec.events) - 1
