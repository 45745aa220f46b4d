"""A protocol's suite is a pure function of one loaded document and the protocol's suite side."""

from __future__ import annotations

import copy
from dataclasses import replace

import pytest

from conformance.run.descriptor import discover
from conformance.run.schema_requirements import SCHEMA_CHECKS
from conformance.run.suites import ProtocolSuite, all_suites, build, suite, unique_ids
from conformance.verdicts.requirements import Level, Registry, Requirement
from specs.documents import PROTOCOLS, Spec, load


def schema_ids(protocol_suite: ProtocolSuite) -> set[str]:
    return {c.requirement.id for c in protocol_suite.registry if c.requirement.phase == "schema"}


def test_the_schema_requirements_registered_are_those_of_the_document_built_from() -> None:
    spec = load("agent-protocol")
    # a profile of the same protocol that declares security: the auth requirement applies to it only
    secured = copy.deepcopy(spec.raw)
    secured["security"] = [{"bearer": []}]
    secured.setdefault("components", {})["securitySchemes"] = {"bearer": {"type": "http", "scheme": "bearer"}}
    declared = discover("agent-protocol")
    assert declared.model is not None
    scenario = [c.requirement.id for c in declared.registry]
    before = scenario + [r.id for r in declared.model.requirements]

    plain, profiled = suite("agent-protocol"), build(Spec(spec.info, spec.path, secured, "secured"))

    assert "AP-SCHEMA-010" in schema_ids(profiled) and "AP-SCHEMA-010" not in schema_ids(plain)
    assert profiled.needs_auth and not plain.needs_auth
    assert schema_ids(plain) == {f"AP-SCHEMA-{sc.number}" for sc in SCHEMA_CHECKS if sc.applies(spec)}
    # the rest is the protocol's own declaration (its scenarios, then what its model decides), in the
    # same order, and nothing shared was changed: no module adds to another's registry
    assert [c.requirement.id for c in profiled.registry if c.requirement.phase != "schema"] == before
    assert [c.requirement.id for c in declared.registry] == scenario
    assert all(c.requirement.phase == "scenario" for c in declared.registry)


def test_a_suite_is_built_once_per_document_and_profile() -> None:
    assert suite("neuro-san") is suite("neuro-san", None)
    upstream = suite("neuro-san", "upstream")
    assert upstream is not suite("neuro-san") and upstream is suite("neuro-san", "upstream")
    spec = load("neuro-san", "upstream")
    assert schema_ids(upstream) == {f"NS-SCHEMA-{sc.number}" for sc in SCHEMA_CHECKS if sc.applies(spec)}
    with pytest.raises(KeyError, match="agent-protocol"):
        suite("no-such-protocol")


def test_a_requirement_id_declared_by_two_protocols_is_refused() -> None:
    def one(protocol: str, rid: str) -> ProtocolSuite:
        registry = Registry(protocol)
        registry.add(Requirement(rid, Level.MUST, "s", "doc", protocol), None)
        return replace(suite("agent-protocol"), id=protocol, registry=registry)

    unique_ids([one("a", "X-001"), one("b", "X-002")])
    with pytest.raises(ValueError, match="X-001 is declared by both a and b"):
        unique_ids([one("a", "X-001"), one("b", "X-001")])


def test_the_discovered_protocols_declare_distinct_ids() -> None:
    suites = all_suites()
    assert set(suites) == set(PROTOCOLS)
    ids = [c.requirement.id for s in suites.values() for c in s.registry]
    assert len(ids) == len(set(ids))


@pytest.mark.parametrize("protocol", sorted(PROTOCOLS))
def test_every_schema_requirement_is_the_suite_plus_those_the_document_does_not_get(protocol: str) -> None:
    """What ``conformance merge`` reads shards' reports against: every requirement a document of the
    protocol could have, in the suite's order, without deciding which apply (no schemathesis)."""
    applied = [c.requirement.id for c in suite(protocol).registry]
    every = [c.requirement.id for c in build(load(protocol), every_schema_requirement=True).registry]
    assert [rid for rid in every if rid in applied] == applied
    assert {rid for rid in every if rid not in applied} == {
        f"{load(protocol).info.prefix}-SCHEMA-{sc.number}" for sc in SCHEMA_CHECKS
    } - set(applied)
