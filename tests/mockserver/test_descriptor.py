"""The mock-side protocol descriptor: every protocol declares one, and a misdeclared part is an
error naming the protocol and the part, raised when the protocol is discovered or mounted."""

from __future__ import annotations

import sys
import types
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import ClassVar

import pytest

from mockserver import (
    Call,
    DescriptorError,
    Handlers,
    MockConfig,
    MockProtocol,
    Reply,
    create_app,
    declare,
    discover,
    fault_maker,
    operation,
)
from mockserver import descriptor as descriptor_module
from mockserver.descriptor import PARTS, mocked
from mockserver.faults import Switches
from specs.documents import protocol


class _Handlers(Handlers):
    @operation("createAgentTask")
    async def create(self, call: Call) -> Reply:
        return Reply({})


_fault = fault_maker("agent-protocol")
FAULT = _fault("ap-test-fault", ("AP-TASK-001",), "a fault for the test")


@pytest.mark.parametrize("protocol_id", mocked())
def test_every_protocol_declares_its_mock_side(protocol_id: str) -> None:
    mock = discover(protocol_id)
    assert isinstance(mock, MockProtocol) and mock.protocol == protocol_id
    assert issubclass(mock.handlers, Handlers) and mock.handlers.operations()
    assert all(f.protocol == protocol_id for f in mock.faults)


def test_an_unknown_part_names_the_protocol_and_the_part() -> None:
    with pytest.raises(DescriptorError) as caught:
        declare("agent-protocol", handlers=_Handlers, fixture=lambda *a: None)  # misspelt: fixtures
    message = str(caught.value)
    assert message.startswith("agent-protocol: unknown part(s) fixture ")
    assert all(part in message for part in PARTS)


def test_a_missing_or_misshapen_part_names_the_protocol_and_the_part() -> None:
    with pytest.raises(DescriptorError, match=r"^agent-protocol: its mock descriptor has no handlers"):
        declare("agent-protocol", faults=(FAULT,))
    with pytest.raises(DescriptorError, match=r"^agent-protocol: the mock descriptor's handlers must be a Handlers"):
        declare("agent-protocol", handlers=lambda api: None)
    with pytest.raises(DescriptorError, match=r"^agent-protocol: the mock descriptor's faults must be Fault"):
        declare("agent-protocol", handlers=_Handlers, faults=("ap-test-fault",))
    with pytest.raises(DescriptorError, match=r"^neuro-san: the mock descriptor's fault 'ap-test-fault' is one of"):
        declare("neuro-san", handlers=_Handlers, faults=(FAULT,))
    with pytest.raises(DescriptorError, match=r"^agent-protocol: the mock descriptor's switches must be"):
        declare("agent-protocol", handlers=_Handlers, switches=dict)
    with pytest.raises(DescriptorError, match=r"^agent-protocol: the mock descriptor's fixtures must be"):
        declare("agent-protocol", handlers=_Handlers, fixtures="plan")


@dataclass(frozen=True, slots=True)
class Loose(Switches):
    prefix: ClassVar[str] = "ap"
    nowhere: bool = False


def test_switches_must_name_declared_faults() -> None:
    with pytest.raises(
        DescriptorError, match=r"^agent-protocol: the mock descriptor's switches name no fault ap-nowhere$"
    ):
        declare("agent-protocol", handlers=_Handlers, faults=(FAULT,), switches=Loose)


@pytest.fixture
def fake_package(monkeypatch: pytest.MonkeyPatch) -> Iterator[types.ModuleType]:
    """agent-protocol's manifest pointed at a package the test fills in."""
    module = types.ModuleType("tests_fake_mock")
    monkeypatch.setitem(sys.modules, "tests_fake_mock", module)
    info = replace(protocol("agent-protocol"), mock="tests_fake_mock")
    monkeypatch.setattr(descriptor_module, "protocol", lambda pid: info)
    descriptor_module.discover.cache_clear()
    yield module
    descriptor_module.discover.cache_clear()


def test_a_package_without_a_descriptor_is_named(fake_package: types.ModuleType) -> None:
    fake_package.mount = lambda api: None  # type: ignore[attr-defined]  # the old, implicit contract
    with pytest.raises(DescriptorError, match=r"^agent-protocol: its mock package tests_fake_mock exports no MOCK"):
        discover("agent-protocol")


def test_a_descriptor_of_another_kind_or_protocol_is_named(fake_package: types.ModuleType) -> None:
    fake_package.MOCK = {"handlers": _Handlers}  # type: ignore[attr-defined]
    with pytest.raises(DescriptorError, match=r"^agent-protocol: tests_fake_mock.MOCK is a dict"):
        discover("agent-protocol")
    descriptor_module.discover.cache_clear()
    fake_package.MOCK = declare("neuro-san", handlers=_Handlers)  # type: ignore[attr-defined]
    with pytest.raises(DescriptorError, match=r"^agent-protocol: tests_fake_mock.MOCK declares the protocol 'neuro"):
        discover("agent-protocol")


def test_a_handler_of_an_operation_the_document_lacks_is_named(fake_package: types.ModuleType) -> None:
    class Misspelt(Handlers):
        @operation("createAgentTsk")
        async def create(self, call: Call) -> Reply:
            return Reply({})

    fake_package.MOCK = declare("agent-protocol", handlers=Misspelt)  # type: ignore[attr-defined]
    with pytest.raises(KeyError, match="agent-protocol: Misspelt serves createAgentTsk, which the document"):
        create_app(MockConfig(protocols=("agent-protocol",)))


def test_two_methods_for_one_operation_are_refused() -> None:
    class Twice(_Handlers):
        @operation("createAgentTask")
        async def again(self, call: Call) -> Reply:
            return Reply({})

    with pytest.raises(TypeError, match="both serve createAgentTask"):
        Twice.operations()
