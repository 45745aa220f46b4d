"""The schema phase's registration on its own: which generic requirements a document gets."""

from __future__ import annotations

from dataclasses import replace

from conformance.requirements import Level, Registry
from conformance.schema_phase import SCHEMA_CHECKS, register_schema_requirements
from specs.documents import Spec, load


def registered(protocol_id: str, prefix: str) -> dict[str, Level]:
    """The ids registered for the protocol's document under a prefix of this test's own, so that
    they plainly come from this registration and not from the protocol's suite."""
    spec = load(protocol_id)
    renamed = Spec(replace(spec.info, prefix=prefix), spec.path, spec.raw, spec.profile)
    registry = Registry(protocol_id)
    register_schema_requirements(registry, renamed)
    assert all(c.run is None and c.requirement.phase == "schema" for c in registry)
    return {c.requirement.id: c.requirement.level for c in registry}


def test_auth_enforcement_is_registered_only_for_a_document_that_declares_security() -> None:
    secured = registered("synapse-agent", "UNITSYN")
    open_ = registered("agent-protocol", "UNITAP")
    assert "UNITSYN-SCHEMA-010" in secured and "UNITAP-SCHEMA-010" not in open_
    applicable = {f"UNITAP-SCHEMA-{sc.number}" for sc in SCHEMA_CHECKS if sc.applies(load("agent-protocol"))}
    assert set(open_) == applicable
    # every agent-protocol operation documents ``default`` (any status), none a response header,
    # none a deletion, and the document declares no security: 002, 004, 009 and 010 do not apply
    assert {rid.rsplit("-", 1)[1] for rid in open_} == {"001", "003", "005", "006", "007", "008"}
    assert open_["UNITAP-SCHEMA-001"] is Level.MUST  # no 5xx


def test_every_registered_schema_requirement_names_a_check_and_the_document() -> None:
    spec = load("neuro-san")
    renamed = Spec(replace(spec.info, prefix="UNITNS"), spec.path, spec.raw, spec.profile)
    registry = Registry("neuro-san")
    register_schema_requirements(registry, renamed)
    numbers = {c.requirement.id.rsplit("-", 1)[1] for c in registry}
    assert numbers <= {sc.number for sc in SCHEMA_CHECKS} and "001" in numbers
    assert all(c.requirement.ref == f"{spec.info.document} (every operation)" for c in registry)
