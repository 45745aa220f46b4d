"""Context.memo: shared fixtures, and shared failures that do not make every later check wait again."""

from __future__ import annotations

import pytest

from conformance.context import CheckFailed, Context, NotVerified, RunOptions
from conformance.http import Limits, TargetError
from conformance.schemas import SchemaSet
from conformance.specs import load


@pytest.fixture
def ctx() -> Context:
    spec = load("synapse-agent")
    context = Context(spec, SchemaSet(spec.raw), RunOptions(protocol="synapse-agent", timeout=1.0), Limits(timeout=1.0))
    yield context
    context.close()


def test_memo_builds_once(ctx: Context) -> None:
    calls = []
    assert ctx.memo("k", lambda: calls.append(1) or 7) == 7
    assert ctx.memo("k", lambda: calls.append(1) or 8) == 7
    assert calls == [1]


@pytest.mark.parametrize(
    ("error", "later"),
    [
        (CheckFailed("the job did not complete"), CheckFailed),
        (NotVerified("no second user"), NotVerified),
        (TargetError("stream stalled"), CheckFailed),
    ],
)
def test_memo_remembers_a_failed_setup(ctx: Context, error: Exception, later: type[Exception]) -> None:
    calls = []

    def broken() -> None:
        calls.append(1)
        raise error

    with pytest.raises(type(error), match=f"^{error}$"):
        ctx.memo("key", broken)
    with pytest.raises(later, match=f"^shared setup failed earlier in this run: {error}$"):
        ctx.memo("key", broken)
    assert calls == [1]


def test_suite_bugs_are_not_remembered(ctx: Context) -> None:
    with pytest.raises(ZeroDivisionError):
        ctx.memo("key", lambda: 1 / 0)
    assert ctx.memo("key", lambda: 3) == 3


def test_evidence_spans_every_client_of_a_check(ctx: Context) -> None:
    extra = ctx.new_client()
    assert ctx.exchanges() == []
    assert extra in ctx._clients and ctx.client in ctx._clients


def test_response_spec_follows_refs_to_shared_responses() -> None:
    """SGR's 404s are `$ref: '#/components/responses/...'`; a scenario-only run must see their content
    without the schema phase having run (schemathesis once inlined refs in the shared document)."""
    spec = load("sgr-agent-core")
    context = Context(spec, SchemaSet(spec.raw), RunOptions(protocol="sgr-agent-core"), Limits(timeout=1.0))
    try:
        assert "$ref" in spec.operation("getAgentState").definition["responses"]["404"]
        assert "application/json" in context.response_spec("getAgentState", 404)["content"]
    finally:
        context.close()
