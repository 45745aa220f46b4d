"""The run plan: one loaded document, the suite built from it, the selection grouped by phase."""

from __future__ import annotations

from conformance.run.options import PHASE_NAMES, RunOptions
from conformance.run.plan import plan
from conformance.run.suites import suite
from conformance.verdicts.requirements import Level
from specs.documents import load


def test_a_plan_groups_the_selected_requirements_by_the_phase_that_decides_them() -> None:
    whole = plan(RunOptions(protocol="agent-protocol"))
    registry = list(suite("agent-protocol").registry)
    assert [c.requirement.id for c in whole.checks] == [c.requirement.id for c in registry]
    grouped = whole.by_phase
    assert list(grouped) == list(PHASE_NAMES)
    for name, requirements in grouped.items():
        assert [r.id for r in requirements] == [c.requirement.id for c in registry if c.requirement.phase == name]
    assert "AP-SCHEMA-001" in {r.id for r in grouped["schema"]} and "AP-TASK-001" in {r.id for r in grouped["scenario"]}
    assert grouped["model"], "agent-protocol has a model"
    assert all(c.run is not None for c in whole.phase("scenario"))
    assert all(c.run is None for c in whole.phase("schema") + whole.phase("model"))


def test_a_plan_selects_by_level_prefix_and_phase() -> None:
    only = plan(RunOptions(protocol="agent-protocol", only=("AP-TASK-",), phases=("scenario",)))
    assert [c.requirement.id for c in only.checks] == ["AP-TASK-001", "AP-TASK-002", "AP-TASK-003"]
    assert only.requirements("schema") == () and only.requirements("model") == ()
    must = plan(RunOptions(protocol="agent-protocol", level=Level.MUST, skip=("AP-SCHEMA-",)))
    assert must.checks and all(c.requirement.level is Level.MUST for c in must.checks)
    assert not must.requirements("schema")


def test_a_plan_stands_on_one_loaded_document_and_one_set_of_validators() -> None:
    first = plan(RunOptions(protocol="neuro-san", profile="upstream"))
    second = plan(RunOptions(protocol="neuro-san", profile="upstream", seed=3))
    assert first.spec is load("neuro-san", "upstream") and first.spec.profile == "upstream"
    assert first.suite is suite("neuro-san", "upstream")
    assert second.spec is first.spec and second.schemas is first.schemas  # nothing parsed or compiled again
    assert plan(RunOptions(protocol="neuro-san")).schemas is not first.schemas  # another document


def test_the_generated_traffic_carries_the_token_only_where_the_document_declares_security() -> None:
    secured = plan(RunOptions(protocol="synapse-agent", token="t"))
    assert secured.auth_headers == {"Authorization": "Bearer t"}
    assert plan(RunOptions(protocol="agent-protocol", token="t")).auth_headers == {}
    assert plan(RunOptions(protocol="synapse-agent")).auth_headers == {}
    started = secured.at(RunOptions(protocol="synapse-agent", base_url="http://127.0.0.1:1", token="u"))
    assert started.options.base_url == "http://127.0.0.1:1" and started.auth_headers == {"Authorization": "Bearer u"}
    assert started.checks == secured.checks and started.spec is secured.spec
