"""SchemaSet: OpenAPI 3.0 dialect conversion, 3.1/3.2 JSON Schema, compile-once caching, messages."""

from __future__ import annotations

from typing import Any

import pytest

from specs.documents import load
from specs.schemas import SchemaSet, SchemaViolation, _upgrade_30

DOC_30: dict[str, Any] = {
    "openapi": "3.0.1",
    "components": {
        "schemas": {
            "Step": {
                "type": "object",
                "required": ["name", "status"],
                "properties": {
                    "name": {"type": "string", "nullable": True},
                    "status": {"type": "string", "enum": ["created", "completed"], "nullable": True},
                    "output": {"type": "string"},
                    "artifact": {"$ref": "#/components/schemas/Artifact", "nullable": True},
                    "nullable": {"type": "boolean"},
                },
            },
            "Artifact": {
                "type": "object",
                "required": ["artifact_id"],
                "properties": {"artifact_id": {"type": "string"}},
            },
            "Steps": {
                "type": "object",
                "properties": {"steps": {"type": "array", "items": {"$ref": "#/components/schemas/Step"}}},
            },
        }
    },
}

DOC_32: dict[str, Any] = {
    "openapi": "3.2.0",
    "components": {
        "schemas": {
            "Chunk": {
                "type": "object",
                "required": ["object", "choices"],
                "properties": {
                    "object": {"const": "chat.completion.chunk"},
                    "choices": {"type": "array", "minItems": 1, "items": {"$ref": "#/components/schemas/Choice"}},
                    "usage": {"type": ["object", "null"]},
                    "pair": {"type": "array", "prefixItems": [{"type": "string"}, {"type": "integer"}], "items": False},
                },
            },
            "Choice": {"type": "object", "required": ["index"], "properties": {"index": {"type": "integer"}}},
        }
    },
}


def _step(**overrides: Any) -> dict[str, Any]:
    return {"name": "s", "status": "created", **overrides}


# --- OpenAPI 3.0: nullable ------------------------------------------------------------------------


def test_30_nullable_string_accepts_null() -> None:
    schemas = SchemaSet(DOC_30)
    assert schemas.violations({"$ref": "#/components/schemas/Step"}, _step(name=None)) == []


def test_30_nullable_enum_accepts_null_and_still_rejects_others() -> None:
    schemas = SchemaSet(DOC_30)
    step = {"$ref": "#/components/schemas/Step"}
    assert schemas.violations(step, _step(status=None)) == []
    problems = schemas.violations(step, _step(status="running"))
    assert [p.path for p in problems] == ["/status"]


def test_30_nullable_ref_accepts_null_and_still_validates_the_target() -> None:
    schemas = SchemaSet(DOC_30)
    step = {"$ref": "#/components/schemas/Step"}
    assert schemas.violations(step, _step(artifact=None)) == []
    assert schemas.violations(step, _step(artifact={"artifact_id": "a1"})) == []
    assert schemas.violations(step, _step(artifact={"artifact_id": 7})) != []


def test_30_not_nullable_rejects_null() -> None:
    problems = SchemaSet(DOC_30).violations({"$ref": "#/components/schemas/Step"}, _step(output=None))
    assert len(problems) == 1
    assert problems[0].path == "/output"
    assert "null" in problems[0].message.lower() or "None" in problems[0].message


def test_30_property_named_nullable_is_kept() -> None:
    # a property *called* "nullable" is a schema, not the keyword: it must still be enforced
    problems = SchemaSet(DOC_30).violations({"$ref": "#/components/schemas/Step"}, _step(nullable="yes"))
    assert [p.path for p in problems] == ["/nullable"]


def test_upgrade_30_does_not_touch_the_input() -> None:
    original = {"type": "string", "nullable": True}
    assert _upgrade_30(original) == {"type": ["string", "null"]}
    assert original == {"type": "string", "nullable": True}
    assert _upgrade_30({"type": "string", "nullable": False}) == {"type": "string"}


def test_30_document_does_not_mutate_components() -> None:
    doc: dict[str, Any] = {"openapi": "3.0.3", "components": {"schemas": {"A": {"type": "string", "nullable": True}}}}
    SchemaSet(doc).component("A")
    assert doc["components"]["schemas"]["A"] == {"type": "string", "nullable": True}


def test_30_uses_draft4_semantics() -> None:
    # draft 4: exclusiveMaximum is a boolean modifier of maximum
    schemas = SchemaSet({"openapi": "3.0.0", "components": {}})
    schema = {"type": "integer", "maximum": 10, "exclusiveMaximum": True}
    assert schemas.violations(schema, 9) == []
    assert schemas.violations(schema, 10) != []


# --- OpenAPI 3.1/3.2: JSON Schema 2020-12 --------------------------------------------------------


def test_32_document_uses_2020_12() -> None:
    schemas = SchemaSet(DOC_32)
    chunk = {"$ref": "#/components/schemas/Chunk"}
    good = {"object": "chat.completion.chunk", "choices": [{"index": 0}], "usage": None, "pair": ["a", 1]}
    assert schemas.violations(chunk, good) == []
    assert [p.path for p in schemas.violations(chunk, {**good, "object": "chat.completion"})] == ["/object"]
    assert [p.path for p in schemas.violations(chunk, {**good, "pair": ["a", "b"]})] == ["/pair/1"]
    assert schemas.violations(chunk, {**good, "pair": ["a", 1, "extra"]}) != []
    assert [p.path for p in schemas.violations(chunk, {**good, "choices": [{"index": "0"}]})] == ["/choices/0/index"]
    assert schemas.violations(chunk, {**good, "choices": []}) != []


def test_32_nullable_keyword_is_not_rewritten() -> None:
    # "nullable" is not a 3.1+ keyword; such a document must say type: [x, "null"]
    schemas = SchemaSet({"openapi": "3.2.0", "components": {}})
    assert schemas.violations({"type": "string", "nullable": True}, None) != []


@pytest.mark.parametrize("protocol_id", ["agent-protocol", "neuro-san", "sgr-agent-core", "synapse-agent"])
def test_every_component_of_the_shipped_documents_compiles(protocol_id: str) -> None:
    spec = load(protocol_id)
    schemas = SchemaSet(spec.raw)
    names = list(spec.raw.get("components", {}).get("schemas", {}))
    assert names
    for name in names:
        assert schemas.component(name) is not None


# --- caching -------------------------------------------------------------------------------------


def test_validator_is_compiled_once_per_schema_object() -> None:
    schemas = SchemaSet(DOC_32)
    schema = {"type": "object", "required": ["a"]}
    first = schemas.validator(schema)
    assert schemas.validator(schema) is first
    assert schemas.validator({"type": "object", "required": ["a"]}) is not first  # another object


def test_component_and_inline_refs_are_cached_by_target() -> None:
    schemas = SchemaSet(DOC_32)
    first = schemas.component("Chunk")
    assert schemas.component("Chunk") is first
    assert schemas.validator({"$ref": "#/components/schemas/Chunk"}) is first
    assert schemas.component("Choice") is not first
    assert len(schemas._cache) == 0  # ref-only schemas never pile up in the identity cache


def test_identity_cache_is_bounded() -> None:
    schemas = SchemaSet(DOC_32)
    for _ in range(SchemaSet.MAX_CACHED + 10):
        schemas.validator({"type": "string"})
    assert len(schemas._cache) <= SchemaSet.MAX_CACHED


def test_cached_validator_still_validates_after_the_cache_starts_over() -> None:
    schemas = SchemaSet(DOC_32)
    kept = {"type": "integer"}
    schemas.validator(kept)
    for _ in range(SchemaSet.MAX_CACHED + 1):
        schemas.validator({"type": "string"})
    assert schemas.violations(kept, "x") != []
    assert schemas.violations(kept, 3) == []


# --- violations ----------------------------------------------------------------------------------


def test_violation_paths_and_messages() -> None:
    schemas = SchemaSet(DOC_30)
    doc = {"steps": [_step(), {"name": "b"}, _step(output=5)]}
    problems = schemas.violations({"$ref": "#/components/schemas/Steps"}, doc)
    by_path = {p.path: p.message for p in problems}
    assert set(by_path) == {"/steps/1", "/steps/2/output"}
    assert "status" in by_path["/steps/1"] and "required" in by_path["/steps/1"]
    assert "string" in by_path["/steps/2/output"]
    assert str(SchemaViolation("/steps/1", "boom")) == "/steps/1: boom"


def test_root_violation_is_shown_as_slash() -> None:
    problems = SchemaSet(DOC_32).violations({"type": "object"}, [1, 2])
    assert len(problems) == 1 and problems[0].path == ""
    assert str(problems[0]).startswith("/: ")


def test_violations_are_limited() -> None:
    schema = {"type": "array", "items": {"type": "string"}}
    schemas = SchemaSet(DOC_32)
    assert len(schemas.violations(schema, list(range(50)))) == 5
    assert len(schemas.violations(schema, list(range(50)), limit=2)) == 2
    assert len(schemas.violations(schema, list(range(3)), limit=10)) == 3


@pytest.mark.parametrize(("fmt", "bound"), [("int32", 2**31), ("int64", 2**63)])
def test_integer_formats_are_the_bounds_they_name(fmt: str, bound: int) -> None:
    schemas = SchemaSet(DOC_32)
    schema = {"type": "integer", "format": fmt}
    assert not schemas.violations(schema, bound - 1) and not schemas.violations(schema, -bound)
    assert schemas.violations(schema, bound) and schemas.violations(schema, -bound - 1)
    # a bound the document gives itself wins; a property named "format" is a schema and stays
    assert not SchemaSet(DOC_32).violations({"type": "integer", "format": fmt, "maximum": 2**70}, bound)
    props = {"type": "object", "properties": {"format": {"type": "integer"}}}
    assert not schemas.violations(props, {"format": 2**80})
