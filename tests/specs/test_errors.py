"""Each protocol's error shape, as its manifest states it, renders the bodies the kit has always sent."""

from __future__ import annotations

import json
from typing import Any

import pytest

from scripts.fuzz_mock import shape_problem
from specs.documents import PROTOCOLS, ErrorShape, protocol

DETAILS = [{"type": "missing", "loc": ["body", "input"], "msg": "field required", "input": None}]
BAD_REQUEST = "type.googleapis.com/google.rpc.BadRequest"


@pytest.mark.parametrize(
    ("protocol_id", "status", "details", "expected"),
    [
        ("agent-protocol", 404, [], {"message": "m"}),
        ("agent-protocol", 422, DETAILS, {"message": "m", "errors": DETAILS}),
        ("neuro-san", 404, [], {"code": 5, "message": "m"}),
        ("neuro-san", 418, [], {"code": 2, "message": "m"}),
        ("neuro-san", 400, DETAILS, {"code": 3, "message": "m", "details": [{"@type": BAD_REQUEST, **DETAILS[0]}]}),
        ("sgr-agent-core", 404, [], {"detail": "m"}),
        ("sgr-agent-core", 422, DETAILS, {"detail": DETAILS}),
        ("sgr-agent-core", 400, DETAILS, {"detail": "m"}),  # only a 422 carries its details
        (
            "synapse-agent",
            401,
            DETAILS,
            {"concreteType": "org.sagebionetworks.repo.model.ErrorResponse", "reason": "m"},
        ),
    ],
)
def test_each_protocol_renders_its_own_error_shape(
    protocol_id: str, status: int, details: list[dict[str, Any]], expected: dict[str, Any]
) -> None:
    assert protocol(protocol_id).error.render(status, "m", details) == expected


def test_a_malformed_body_is_answered_with_the_protocols_status() -> None:
    assert {pid: info.error.invalid_body_status for pid, info in PROTOCOLS.items()} == {
        "agent-protocol": 422,
        "neuro-san": 400,
        "sgr-agent-core": 422,
        "synapse-agent": 400,
    }


def test_a_rendered_body_is_a_fresh_object() -> None:
    shape = ErrorShape({"message": "$message"}, details="errors")
    first = shape.render(422, "a", DETAILS)
    first["errors"].clear()
    assert shape.render(422, "a", DETAILS)["errors"] == DETAILS


@pytest.mark.parametrize("protocol_id", sorted(PROTOCOLS))
@pytest.mark.parametrize("status", [400, 401, 404, 422, 503])
def test_every_rendered_error_is_in_the_shape_the_generic_checks_expect(protocol_id: str, status: int) -> None:
    """What the mock and the proxy render from a manifest is what the fuzzer, the limits and the chaos
    tests accept as that protocol's error shape: one reading of the manifest, any protocol."""
    info = protocol(protocol_id)
    for details in ([], DETAILS):
        body = info.error.render(status, "m", details)
        assert shape_problem(protocol_id, status, "application/json", json.dumps(body).encode()) is None, body
