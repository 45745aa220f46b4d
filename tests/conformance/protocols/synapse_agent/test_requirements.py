"""The Synapse agent chat requirements: the reference mock passes them all, each fault is caught,
and the checks say "not verified" (never "passed") where the target cannot show the behaviour."""

from __future__ import annotations

import pytest

from conformance.check.context import Context
from conformance.engine.runner import run
from conformance.protocols.synapse_agent import requirements as syn
from conformance.run.options import RunOptions
from conformance.run.plan import limits_for
from conformance.run.suites import suite
from conformance.verdicts.requirements import Level
from conformance.verdicts.results import RunResult, Status
from mockserver import MockConfig
from mockserver.embedded import EmbeddedServer
from mockserver.protocols.synapse_agent import FAULTS
from mockserver.protocols.synapse_agent import store as mock
from specs.documents import load
from specs.schemas import SchemaSet

PROTOCOL = "synapse-agent"
BASE_PATH = "/repo/v1"
FAULTS_BY_NAME = {f.name: f for f in FAULTS}


def statuses(result: RunResult) -> dict[str, Status]:
    return {r.requirement.id: r.status for r in result.results}


def messages(result: RunResult) -> dict[str, str]:
    return {r.requirement.id: r.message for r in result.results}


def run_against(
    config: MockConfig,
    only: tuple[str, ...],
    *,
    second_token: str | None = "bob-token",
    phases: tuple[str, ...] = ("scenario",),
    timeout: float = 5.0,
) -> RunResult:
    with EmbeddedServer(config) as server:
        return run(
            RunOptions(
                protocol=PROTOCOL,
                base_url=server.url + BASE_PATH,
                token="alice-token",
                second_token=second_token,
                seed=0,
                max_examples=5,
                timeout=timeout,
                only=only,
                phases=phases,
            )
        )


# -- the reference mock passes -----------------------------------------------------------------


def test_the_registry() -> None:
    protocol_suite = suite(PROTOCOL)
    scenario = [c.requirement for c in protocol_suite.registry if c.run is not None]
    assert 12 <= len(scenario) <= 24
    assert protocol_suite.streaming_operations == ()
    assert protocol_suite.needs_auth
    assert all(r.id.startswith("SYN-") and r.ref and r.statement for r in scenario)
    assert {r.id for r in scenario if r.level is Level.SHOULD} == {"SYN-SESS-003", "SYN-AUTH-003"}


# -- every fault is caught ---------------------------------------------------------------------

# -- not verified, never passed ----------------------------------------------------------------


def test_ownership_needs_a_second_token() -> None:
    result = run_against(MockConfig(protocols=(PROTOCOL,)), ("SYN-OWN-",), second_token=None)
    assert set(statuses(result).values()) == {Status.NOT_VERIFIED}
    assert all("--second-token" in m for m in messages(result).values())
    assert result.exit_code == 1  # a MUST that is not verified is not a pass


def test_a_job_done_before_the_first_poll_leaves_the_202_form_not_verified() -> None:
    result = run_against(MockConfig(protocols=(PROTOCOL,), job_seconds=0.0), ("SYN-JOB-",))
    assert statuses(result) == {
        "SYN-JOB-001": Status.PASSED,
        "SYN-JOB-002": Status.PASSED,
        "SYN-JOB-003": Status.NOT_VERIFIED,
        "SYN-JOB-004": Status.PASSED,
    }
    assert "never observed" in messages(result)["SYN-JOB-003"]


def test_a_server_that_never_pages_leaves_paging_not_verified(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(mock, "PAGE_SIZE", 10_000)
    result = run_against(MockConfig(protocols=(PROTOCOL,)), ("SYN-PAGE-001",))
    assert statuses(result) == {"SYN-PAGE-001": Status.NOT_VERIFIED}
    assert f"after {syn.MAX_PAGING_SESSIONS} were created" in messages(result)["SYN-PAGE-001"]


def test_helpers() -> None:
    spec = load(PROTOCOL)
    options = RunOptions(protocol=PROTOCOL, timeout=4.0)
    ctx = Context(spec, SchemaSet(spec.raw), options, limits_for(options))
    assert syn.job_bound(ctx) == 12.0  # the run's one bound of a wait for progress: three timeouts
    assert syn._ref("/agent/chat/trace/{jobId}", "post") == f"{syn.DOC}#/paths/~1agent~1chat~1trace~1{{jobId}}/post"
    assert syn._seg("a/b c") == "a%2Fb%20c"
    ctx.client.close()
