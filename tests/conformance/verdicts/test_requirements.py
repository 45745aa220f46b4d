"""Requirements as data: levels, registration and the operations a requirement is about."""

from __future__ import annotations

import pytest

from conformance.verdicts.requirements import Level, Registry, Requirement, describe, operations_of
from specs.documents import load


def test_a_level_includes_the_stricter_ones() -> None:
    assert Level.SHOULD.includes(Level.MUST) and Level.SHOULD.includes(Level.SHOULD)
    assert not Level.MUST.includes(Level.SHOULD)
    assert all(Level.MAY.includes(level) for level in Level)


def test_a_registry_keeps_declaration_order_and_refuses_a_second_use_of_an_id() -> None:
    registry = Registry("agent-protocol")

    @registry.requirement("UNIT-REQ-002", Level.MUST, "second", "doc#/a")
    def second(ctx: object) -> None: ...

    registry.add(Requirement("UNIT-REQ-001", Level.SHOULD, "first", "doc#/b", "agent-protocol", phase="schema"), None)
    assert [c.requirement.id for c in registry] == ["UNIT-REQ-002", "UNIT-REQ-001"]
    assert registry.get("UNIT-REQ-002").run is second and len(registry) == 2
    with pytest.raises(ValueError, match="duplicate requirement id UNIT-REQ-002"):
        registry.add(Requirement("UNIT-REQ-002", Level.MUST, "again", "", "agent-protocol"), None)
    # another registry is another protocol's: whether ids clash across protocols is checked where
    # the suites meet (suites.unique_ids), not through a set every registry shares
    Registry("neuro-san").add(Requirement("UNIT-REQ-002", Level.MUST, "again", "", "neuro-san"), None)


def test_a_requirement_is_about_the_operations_its_reference_or_statement_names() -> None:
    spec = load("synapse-agent")
    by_ref = Requirement("UNIT-OPS-1", Level.MUST, "s", "openapi.yaml#/paths/~1agent~1session/post", "synapse-agent")
    by_text = Requirement("UNIT-OPS-2", Level.MUST, "GET /agent/session/{sessionId} answers it", "x", "synapse-agent")
    schema = Requirement("UNIT-OPS-3", Level.MUST, "s", "x", "synapse-agent", phase="schema")
    assert operations_of(by_ref, spec) == ["POST /agent/session"]
    assert operations_of(by_text, spec) == ["GET /agent/session/{sessionId}"]
    assert operations_of(schema, spec) == [op.label for op in spec.operations()]
    assert describe(by_text, spec)["operations"] == ["GET /agent/session/{sessionId}"]
