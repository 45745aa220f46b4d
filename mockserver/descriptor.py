"""A protocol's mock side, declared: one typed descriptor per protocol package, checked when found.

A protocol's mock package (its manifest's ``mock``) exports ``MOCK = declare(protocol_id, ...)``
with its parts: ``handlers`` (a ``Handlers`` class, required), ``faults`` (its named faults),
``switches`` (the ``Switches`` its handlers read), ``fixtures`` (the reader of its part of a
fixtures document), ``stubs`` (its protocol-level data stubs). Nothing is found by attribute
name: an unknown or missing part, a part of the wrong kind, or a package without a descriptor is a
``DescriptorError`` naming the protocol and the part, raised when the protocol is discovered, the
way pluggy rejects an unknown hook.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable
from dataclasses import dataclass, fields
from functools import cache
from typing import Any

from specs.documents import PROTOCOLS, protocol

from .api import Handlers
from .faults import Fault, FaultSet, Switches
from .fixtures import Planner


class DescriptorError(Exception):
    """A protocol's mock side is not declared as it must be; the message names the protocol and the part."""


@dataclass(frozen=True, slots=True)
class MockProtocol:
    protocol: str
    handlers: type[Handlers]
    """Its operations, one method each, mounted on the protocol's ``ProtocolApi``."""
    faults: tuple[Fault, ...] = ()
    switches: type[Switches] | None = None
    """The typed behaviour faults its handlers read (``Switches.of(api.faults)``)."""
    fixtures: Planner | None = None
    """Reads its part of a fixtures document (mockserver/fixtures.py); None: it keeps no state."""
    stubs: Any = None
    """Its protocol-level data stubs (mockserver/stubs.py); None: it has none."""


PARTS = tuple(f.name for f in fields(MockProtocol) if f.name != "protocol")


def _check(protocol_id: str, part: str, ok: bool, wanted: str, value: Any) -> None:
    if not ok:
        raise DescriptorError(f"{protocol_id}: the mock descriptor's {part} must be {wanted}, got {value!r}")


def declare(protocol_id: str, **parts: Any) -> MockProtocol:
    """The descriptor ``MOCK`` of a protocol's mock package, its parts checked."""
    unknown = sorted(set(parts) - set(PARTS))
    if unknown:
        raise DescriptorError(
            f"{protocol_id}: unknown part(s) {', '.join(unknown)} of its mock descriptor; the parts are "
            f"{', '.join(PARTS)}"
        )
    handlers = parts.get("handlers")
    if handlers is None:
        raise DescriptorError(f"{protocol_id}: its mock descriptor has no handlers (a Handlers class)")
    _check(
        protocol_id,
        "handlers",
        isinstance(handlers, type) and issubclass(handlers, Handlers),
        "a Handlers class",
        handlers,
    )
    faults = tuple(parts.get("faults", ()))
    for fault in faults:
        _check(protocol_id, "faults", isinstance(fault, Fault), "Fault objects", fault)
        if fault.protocol != protocol_id:
            raise DescriptorError(
                f"{protocol_id}: the mock descriptor's fault {fault.name!r} is one of {fault.protocol}"
            )
    switches = parts.get("switches")
    if switches is not None:
        _check(
            protocol_id,
            "switches",
            isinstance(switches, type) and issubclass(switches, Switches),
            "a Switches class",
            switches,
        )
        named = {f.name for f in faults}
        loose = sorted(set(switches.fault_names().values()) - named)
        if loose:
            raise DescriptorError(f"{protocol_id}: the mock descriptor's switches name no fault {', '.join(loose)}")
    fixtures = parts.get("fixtures")
    if fixtures is not None:
        _check(protocol_id, "fixtures", callable(fixtures), "a fixtures reader (a function)", fixtures)
    return MockProtocol(protocol_id, handlers, faults, switches, fixtures, parts.get("stubs"))


@cache
def discover(protocol_id: str) -> MockProtocol:
    """The protocol's mock descriptor, found through its manifest's ``mock`` package."""
    try:
        info = protocol(protocol_id)
    except KeyError as exc:
        raise DescriptorError(str(exc.args[0])) from None
    if not info.mock:
        raise DescriptorError(f"{protocol_id}: has no mock side (its protocol.yaml names no mock package)")
    module = importlib.import_module(info.mock)
    found = getattr(module, "MOCK", None)
    if found is None:
        raise DescriptorError(
            f"{protocol_id}: its mock package {info.mock} exports no MOCK (mockserver.descriptor.declare)"
        )
    if not isinstance(found, MockProtocol):
        raise DescriptorError(f"{protocol_id}: {info.mock}.MOCK is a {type(found).__name__}, not a MockProtocol")
    if found.protocol != protocol_id:
        raise DescriptorError(f"{protocol_id}: {info.mock}.MOCK declares the protocol {found.protocol!r}")
    return found


def mocked() -> list[str]:
    """The protocols that have a mock side."""
    return [pid for pid, info in PROTOCOLS.items() if info.mock]


def descriptors(protocol_ids: Iterable[str] | None = None) -> dict[str, MockProtocol]:
    return {pid: discover(pid) for pid in (mocked() if protocol_ids is None else protocol_ids)}


def catalogue() -> dict[str, Fault]:
    """Every fault of every protocol, by name."""
    found: dict[str, Fault] = {}
    for mock in descriptors().values():
        for fault in mock.faults:
            if fault.name in found:
                raise ValueError(f"duplicate fault name {fault.name!r}")
            found[fault.name] = fault
    return found


def resolve(names: Iterable[str]) -> FaultSet:
    known = catalogue()
    names = list(names)
    unknown = [n for n in names if n not in known]
    if unknown:
        raise KeyError(f"unknown fault(s): {', '.join(unknown)}; see `python -m mockserver --list-faults`")
    return FaultSet(known[n] for n in names)
