"""Targeted cases: derived from the document, the same every run, each a request it forbids."""

from __future__ import annotations

import json

import pytest

from conformance.phases.schema import targeted
from specs.documents import load
from specs.schemas import SchemaSet


def cases(pid: str, known: dict[str, tuple[str, ...]] | None = None) -> list[targeted.Targeted]:
    spec = load(pid)
    return list(targeted.cases(spec, SchemaSet(spec.raw), known or {}))


def test_the_neuro_san_case_only_some_draws_reached_is_always_sent() -> None:
    found = {c.what: c for c in cases("neuro-san", {"agent_name": ("mock_echo",)})}
    deep = found["chat_context.chat_histories[0] as 7, where the document wants object"]
    assert json.loads(deep.body) == {"chat_context": {"chat_histories": [7]}}
    assert deep.path == "/api/v1/mock_echo/streaming_chat" and deep.method == "POST"
    assert found["a body that is not UTF-8"].body == targeted.NOT_UTF8


def test_an_operation_whose_path_names_an_unknown_id_gets_only_the_id_that_names_nothing() -> None:
    """Without the discovered agent an invalid body would reach only a 404; an id that names
    nothing is sent anyway, once per operation, and only a 5xx is judged of it."""
    unknown = [c for c in cases("neuro-san") if not c.negative]
    assert cases("neuro-san") == unknown and len(unknown) == 3
    assert all("conformance-no-such-agent_name" in c.path for c in unknown)
    assert {c.operation for c in cases("agent-protocol") if c.negative} == {"POST /ap/v1/agent/tasks"}
    steps = next(c for c in cases("agent-protocol") if c.operation == "POST /ap/v1/agent/tasks/{task_id}/steps")
    assert not steps.negative and steps.body is not None  # a valid body, under a task that does not exist


@pytest.mark.parametrize("pid", ["agent-protocol", "neuro-san", "sgr-agent-core", "synapse-agent"])
def test_every_case_is_a_request_the_document_forbids_and_the_same_every_time(pid: str) -> None:
    spec = load(pid)
    schemas = SchemaSet(spec.raw)
    made = cases(pid, {"agent_name": ("hello_world",)})
    assert made and made == cases(pid, {"agent_name": ("hello_world",)})
    for case in made:
        if not case.negative:
            continue  # a valid request naming nothing
        assert case.body is not None
        if case.body == targeted.NOT_UTF8:
            with pytest.raises(UnicodeDecodeError):
                case.body.decode("utf-8")
            continue
        op = next(o for o in spec.operations() if o.label == case.operation)
        schema = spec.resolve(op.definition["requestBody"])["content"]["application/json"]["schema"]
        assert schemas.violations(schema, json.loads(case.body)), case.what


@pytest.mark.parametrize(
    ("node", "expected"),
    [
        ({"type": "string"}, ({"conformance": "a value of another type"}, ["string"])),
        ({"type": "object"}, (7, ["object"])),
        ({"type": ["string", "null"]}, ({"conformance": "a value of another type"}, ["string", "null"])),
        ({"type": "number"}, ({"conformance": "a value of another type"}, ["number"])),
        ({"oneOf": [{"type": "string"}]}, None),
        ({}, None),
    ],
)
def test_a_wrong_value_is_of_a_type_no_lax_parser_coerces(node: dict[str, object], expected: object) -> None:
    assert targeted._wrong_value(node) == expected


def test_a_violation_is_placed_on_a_copy_making_the_way() -> None:
    base = {"a": {"keep": 1}}
    assert targeted._placed(base, ("a", "b", 0), 7) == {"a": {"keep": 1, "b": [7]}}
    assert targeted._placed(base, ("a", "keep", "x"), 7) is None  # an integer cannot hold a member
    assert base == {"a": {"keep": 1}}
    assert targeted._dotted(("a", "b", 0, "c")) == "a.b[0].c"
