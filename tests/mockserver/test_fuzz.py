"""Self-fuzz, CI profile: schemathesis (examples, coverage, positive and negative fuzzing, stateful)
against every operation of the four protocols on a real mock; every response is checked for 5xx,
leaked internals and the protocol's own error shape (scripts/fuzz_mock.py; the recorded larger
run is in docs/reliability.md)."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from mockserver import MockConfig
from mockserver.embedded import EmbeddedServer
from scripts.fuzz_mock import fuzz_protocol, leak_problem, mock_self_fuzz_guard, shape_problem
from specs.documents import load
from tests.facts import mocked

pytestmark = pytest.mark.slow

MAX_EXAMPLES = 5
BUDGET_S = 9.0
"""Per protocol; a run that hits it stops cleanly and is judged on what it sent."""
TOP_UP_S = 3.0
"""Per operation the whole-protocol run did not reach in its budget (a slow or loaded machine)."""


@pytest.fixture(scope="module")
def mock_root() -> Iterator[str]:
    with EmbeddedServer(MockConfig(job_seconds=0.05)) as server:
        yield server.url


@pytest.mark.parametrize("protocol", mocked())
def test_no_5xx_no_leak_and_every_rejection_in_the_protocols_shape(protocol: str, mock_root: str) -> None:
    result = fuzz_protocol(protocol, mock_root, max_examples=MAX_EXAMPLES, seed=1, budget_s=BUDGET_S)
    # how far one budget gets depends on the machine's speed; what is covered must not
    labels = {f"{op.method.upper()} {op.path}": op.operation_id for op in load(protocol).operations()}
    for label in sorted(set(labels) - set(result.operations)):
        result.absorb(
            fuzz_protocol(
                protocol, mock_root, max_examples=MAX_EXAMPLES, seed=1, budget_s=TOP_UP_S, operations=(labels[label],)
            )
        )
    report = result.summary() + "".join(f"\n  {s}" for s in result.samples + result.transport_samples)
    assert result.server_errors == 0, report
    assert result.leaks == 0, report
    assert result.shape_violations == 0, report
    assert result.transport_errors == 0, report
    # it really ran: every operation, valid and invalid data (2xx and 4xx), coverage and fuzzing
    assert set(result.operations) == set(labels), report
    assert result.requests >= min(100, 25 * len(labels)), report  # a small document has fewer cases to send
    assert result.statuses.get("2xx", 0) > 0 and result.statuses.get("4xx", 0) > 0, report
    assert {"coverage", "fuzzing"} <= set(result.phases), report


def test_the_guard_catches_crashes_and_foreign_error_shapes() -> None:
    """The same run against a mock with two faults: a crash (500) and a 404 in the wrong shape."""
    config = MockConfig(protocols=("agent-protocol",), faults=("ap-page-huge-size-crashes", "ap-404-wrong-shape"))
    with EmbeddedServer(config) as server:
        result = fuzz_protocol(
            "agent-protocol",
            server.url,
            max_examples=3,
            budget_s=BUDGET_S,
            operations=("listAgentTasks", "getAgentTask"),
        )
    assert result.server_errors > 0, result.summary()
    assert result.shape_violations > 0, result.summary()
    assert any("-> 500" in s for s in result.samples) and any("-> 404" in s for s in result.samples)


def test_the_guard_is_registered_only_while_a_run_lasts() -> None:
    from schemathesis.checks import CHECKS

    assert mock_self_fuzz_guard.__name__ not in CHECKS.get_all_names()


@pytest.mark.parametrize(
    ("protocol", "status", "body", "ok"),
    [
        ("agent-protocol", 404, {"message": "Task 'x' not found"}, True),
        ("agent-protocol", 422, {"message": "bad", "errors": []}, True),
        ("agent-protocol", 404, {"detail": "x"}, False),
        ("neuro-san", 404, {"code": 5, "message": "x"}, True),
        ("neuro-san", 404, {"code": "NOT_FOUND", "message": "x"}, False),
        ("neuro-san", 400, {"code": True, "message": "x"}, False),
        ("sgr-agent-core", 422, {"detail": [{"loc": ["body"]}]}, True),
        ("sgr-agent-core", 404, {"detail": "Agent not found"}, True),
        ("sgr-agent-core", 404, {"detail": "x", "extra": 1}, False),
        ("synapse-agent", 403, {"concreteType": "org.sagebionetworks.repo.model.ErrorResponse", "reason": "x"}, True),
        ("synapse-agent", 403, {"message": "x"}, False),
        ("synapse-agent", 403, ["x"], False),
    ],
)
def test_error_shapes(protocol: str, status: int, body: object, ok: bool) -> None:
    problem = shape_problem(protocol, status, "application/json", json.dumps(body).encode())
    assert (problem is None) is ok, problem


def test_error_shape_needs_json() -> None:
    assert shape_problem("agent-protocol", 400, "text/plain; charset=utf-8", b"Bad Request") is not None
    assert shape_problem("agent-protocol", 400, "application/json", b"{") == "body is not JSON"


def test_leaks_are_found_unless_the_request_carried_them() -> None:
    trace = b'{"message": "Traceback (most recent call last):\\n  File \\"/srv/app.py\\", line 3"}'
    assert leak_problem(trace, "POST /x {}") is not None
    assert leak_problem(b'{"detail": "RecursionError: maximum recursion depth"}', "") is not None
    assert leak_problem(b'{"reason": "x", "concreteType": "org.sagebionetworks.repo.model.ErrorResponse"}', "") is None
    # an echo of the client's own text is not a leak
    echoed = b'{"input": "see File \\"a.py\\", line 1: ValueError"}'
    assert leak_problem(echoed, 'POST /ap/v1/agent/tasks {"input": "see File \\"a.py\\", line 1: ValueError"}') is None
