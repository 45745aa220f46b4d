"""A protocol's suite side is one checked descriptor: a misspelt, missing, unknown or wrongly typed
part is an error naming the protocol and the part, when it is declared, discovered or built."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from dataclasses import replace
from types import ModuleType
from typing import Any

import pytest

from conformance.check.context import Context
from conformance.check.model import Model, ModelMachine
from conformance.check.passive import Checks
from conformance.run import descriptor
from conformance.run.descriptor import DescriptorError, SuiteProtocol, declare, discover
from conformance.run.suites import build, suite
from conformance.verdicts.requirements import Level, Registry, Requirement
from specs.documents import PROTOCOLS, SpecError, load


def registry(protocol: str = "toy", *, from_traffic: bool = False) -> Registry:
    declared = Registry(protocol)

    @declared.requirement("TOY-X-001", Level.MUST, "a statement", "doc#/x", from_traffic=from_traffic)
    def check(ctx: Context) -> None: ...

    return declared


def model(*requirements: Requirement) -> Model:
    return Model(ModelMachine, lambda session: None, requirements=requirements)


@pytest.mark.parametrize(
    ("parts", "names"),
    [
        ({"registry": registry(), "modle": None}, ["toy", "unknown part(s) modle", "the parts are registry, model"]),
        ({"registry": registry(), "Passive": Checks}, ["toy", "unknown part(s) Passive"]),
        ({"model": None}, ["toy", "no registry"]),
        ({"registry": registry("other")}, ["toy", "registry is 'other'"]),
        ({"registry": [registry()]}, ["toy", "registry must be a Registry"]),
        ({"registry": registry(), "passive": object}, ["toy", "passive must be a Checks class"]),
        ({"registry": registry(), "model": "MODEL"}, ["toy", "model must be a Model"]),
        (
            {"registry": registry(), "model": model(Requirement("TOY-M-001", Level.MUST, "s", "r", "toy", "scenario"))},
            ["toy", "model decides TOY-M-001", "phase 'scenario'"],
        ),
        (
            {
                "registry": registry(),
                "model": model(Requirement("OTHER-M-001", Level.MUST, "s", "r", "other", "model")),
            },
            ["toy", "model decides OTHER-M-001", "protocol 'other'"],
        ),
        ({"registry": registry(from_traffic=True)}, ["toy", "no passive", "TOY-X-001"]),
        (
            {"registry": registry(), "passive": Checks, "schema_from_traffic": ("use_after_fre",)},
            ["toy", "schema_from_traffic must be a schemathesis check", "'use_after_fre'"],
        ),
        ({"registry": registry(), "stream_media_types": "text/event-stream"}, ["toy", "stream_media_types"]),
        (
            {"registry": registry(), "expected_statuses": {"createGreeting": {"negative_data_rejection": "422"}}},
            ["toy", "expected_statuses", "a tuple of status strings"],
        ),
        (
            {"registry": registry(), "expected_statuses": {"createGreeting": {"negative_data": ("422",)}}},
            ["toy", "expected_statuses of createGreeting", "'negative_data'"],
        ),
        ({"registry": registry(), "known_path_values": {"name": ("ada",)}}, ["toy", "known_path_values"]),
    ],
)
def test_a_part_misspelt_missing_or_of_the_wrong_kind_is_refused_naming_it(
    parts: dict[str, Any], names: list[str]
) -> None:
    with pytest.raises(DescriptorError) as raised:
        declare("toy", **parts)
    message = str(raised.value)
    assert isinstance(raised.value, SpecError)  # the CLI reports it as it reports a broken document (exit 2)
    for name in names:
        assert name in message


def test_a_complete_descriptor_keeps_every_part() -> None:
    declared = registry(from_traffic=True)
    built = declare(
        "toy",
        registry=declared,
        passive=Checks,
        schema_from_traffic=("use_after_free",),
        stream_media_types=("application/json-lines",),
        expected_statuses={"createGreeting": {"negative_data_rejection": ("422",)}},
    )
    assert isinstance(built, SuiteProtocol) and built.registry is declared and built.passive is Checks
    assert built.schema_from_traffic == ("use_after_free",) and built.stream_media_types == ("application/json-lines",)


@pytest.fixture
def package(monkeypatch: pytest.MonkeyPatch) -> Iterator[ModuleType]:
    """A suite package the agent-protocol manifest names, whose contents each test sets."""
    module = ModuleType("suite_under_test")
    monkeypatch.setitem(sys.modules, module.__name__, module)
    info = replace(PROTOCOLS["agent-protocol"], suite=module.__name__)
    monkeypatch.setattr(descriptor, "protocol", lambda protocol_id: info)
    yield module


def test_a_package_without_a_descriptor_is_refused_naming_it(package: ModuleType) -> None:
    with pytest.raises(DescriptorError, match=r"agent-protocol: its suite package suite_under_test exports no SUITE"):
        discover("agent-protocol")
    package.SUITE = registry("agent-protocol")  # type: ignore[attr-defined]
    with pytest.raises(DescriptorError, match=r"suite_under_test.SUITE is a Registry, not a SuiteProtocol"):
        discover("agent-protocol")
    package.SUITE = declare("toy", registry=registry())  # type: ignore[attr-defined]
    with pytest.raises(DescriptorError, match=r"agent-protocol: suite_under_test.SUITE declares the protocol 'toy'"):
        discover("agent-protocol")


def test_an_operation_the_document_lacks_is_refused_when_the_suite_is_built(package: ModuleType) -> None:
    statuses = {"createAgentTasks": {"negative_data_rejection": ("404",)}}  # the document's is createAgentTask
    package.SUITE = declare("agent-protocol", registry=Registry("agent-protocol"), expected_statuses=statuses)  # type: ignore[attr-defined]
    with pytest.raises(
        DescriptorError, match=r"agent-protocol: .*expected_statuses name operation\(s\) createAgentTasks"
    ):
        build(load("agent-protocol"))


def test_every_discovered_protocol_declares_its_suite_side() -> None:
    for protocol_id in PROTOCOLS:
        declared = discover(protocol_id)
        assert declared.protocol == protocol_id
        judged = {c.requirement.id for c in suite(protocol_id).registry if c.requirement.from_traffic}
        # what the proxy judges is read from the requirements themselves: every one of them is a
        # registered requirement, and a protocol with a passive judge has something for it to judge
        assert (declared.passive is not None) == any("-SCHEMA-" not in rid for rid in judged)
