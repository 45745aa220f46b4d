"""Generic schema requirements are registered only where a server could fail them."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from conformance.run.applicability import (
    some_header_can_fail,
    some_status_can_be_undocumented,
    something_created_is_read_back,
)
from conformance.run.suites import suite
from specs.documents import PROTOCOLS, Spec, load
from tests.facts import facts


@pytest.mark.parametrize("pid", sorted(PROTOCOLS))
def test_registered_schema_requirements(pid: str) -> None:
    """Each protocol's test facts say which generic requirements its document gets, and why."""
    got = {c.requirement.id.rsplit("-", 1)[1] for c in suite(pid).registry if c.requirement.phase == "schema"}
    assert got == facts(pid).schema_requirements


def _edited(pid: str, edit: Any) -> Spec:
    base = load(pid)
    raw = copy.deepcopy(base.raw)
    edit(raw)
    return Spec(base.info, base.path, raw, None)


def test_an_operation_without_default_makes_statuses_checkable() -> None:
    assert not some_status_can_be_undocumented(load("agent-protocol"))
    spec = _edited("agent-protocol", lambda raw: raw["paths"]["/ap/v1/agent/tasks"]["get"]["responses"].pop("default"))
    assert some_status_can_be_undocumented(spec)


def test_a_required_or_constrained_header_makes_headers_checkable() -> None:
    assert not some_header_can_fail(load("synapse-agent"))
    assert some_header_can_fail(load("sgr-agent-core"))

    def add_header(raw: dict[str, Any]) -> None:
        ok = raw["paths"]["/ap/v1/agent/tasks"]["get"]["responses"]["200"]
        ok["headers"] = {"X-Total": {"required": True, "schema": {"type": "string"}}}

    assert some_header_can_fail(_edited("agent-protocol", add_header))


def test_read_back_is_judged_only_where_schemathesis_chains_a_post_to_a_read_under_it() -> None:
    assert something_created_is_read_back(load("agent-protocol"))
    assert not something_created_is_read_back(load("neuro-san"))
    assert not something_created_is_read_back(load("sgr-agent-core"))
