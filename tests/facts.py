"""What the generic tests need to know of one protocol, declared beside that protocol's tests.

A protocol's test facts are one ``Facts`` object, ``FACTS``, in the module ``facts`` beside its
mock-side tests: tests/mockserver/protocols/<pkg>/facts.py for the kit's own (the test tree mirrors
``mockserver.protocols.<pkg>``), and the ``facts`` module of its own package for one added from
outside (tests/fixtures/toy_protocol/facts.py). The generic tests (fuzz, limits, chaos, fixtures,
applicability, error shapes) loop over every discovered protocol and read its facts, so a fifth
protocol is covered without a table being edited; a protocol without facts, or whose facts leave
out what its manifest and mock declare (a stream, a fixtures reader), fails them by name.
"""

from __future__ import annotations

import importlib
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import Any, Literal

import httpx

from mockserver.descriptor import discover as mock_side
from specs.documents import PROTOCOLS, protocol


@dataclass(frozen=True, slots=True)
class Call:
    """One request: method, path (the server path included), JSON body, headers."""

    method: str
    path: str
    json: Any = None
    headers: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Stream:
    """A streamed answer of the protocol's mock."""

    call: Call
    """A POST whose 200 answer is a stream of several frames."""
    kind: Literal["sse", "ndjson"]
    first_frame: bytes
    """Bytes that begin each of its content frames on the wire."""
    before_stall: int
    """Frames ``stall_fault`` lets through before it stops sending."""
    stall_fault: str
    """A fault of the mock that stalls the stream midway, the connection left open."""
    abandoned: Callable[[str], Awaitable[None]] | None = None
    """Checks, given the mock's URL, that the work behind a stream its client left was abandoned."""


@dataclass(frozen=True, slots=True)
class Fixtures:
    """The protocol's part of a fixtures document and what a client sees once it is loaded."""

    document: Mapping[str, Any]
    loaded: Mapping[str, list[str]]
    """What the admin API reports it loaded (the ids of what it created)."""
    check: Callable[[httpx.Client], None]
    """Asserts that the loaded objects behave as if a client had created them."""
    gone: Call
    """A request that finds a loaded object, answered 404 once the state is reset."""


@dataclass(frozen=True, slots=True)
class Facts:
    protocol: str
    schema_requirements: frozenset[str]
    """The numbers of the generic schema requirements its document gets (run/applicability.py)."""
    served: Call
    """A request a fresh mock answers with a 2xx."""
    json_post: Call
    """A POST with a JSON body (the size limits refuse one that is too large)."""
    named_values: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """Values the mock knows for parameters the document types as free strings (``path.<name>``,
    ``body.<name>``), so generated requests reach its handlers, not only its 404s."""
    stream: Stream | None = None
    """Its streamed answer, when it has streaming operations."""
    fixtures: Fixtures | None = None
    """Its fixtures, when its mock reads a part of a fixtures document."""


class FactsError(Exception):
    """A protocol's test facts are missing or leave out what the protocol declares."""


@cache
def facts(protocol_id: str) -> Facts:
    """The test facts of a discovered protocol, checked against what its manifest and mock declare."""
    info = protocol(protocol_id)
    base = info.mock or info.suite
    tried = [f"tests.{base}.facts", f"{base.rsplit('.', 1)[0]}.facts"]
    for name in tried:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name is None or not name.startswith(exc.name):
                raise
            continue
        found = getattr(module, "FACTS", None)
        if not isinstance(found, Facts) or found.protocol != protocol_id:
            raise FactsError(f"{protocol_id}: {name}.FACTS is not a Facts of {protocol_id}: {found!r}")
        if info.streaming_operations and info.mock and found.stream is None:
            streams = ", ".join(info.streaming_operations)
            raise FactsError(f"{protocol_id}: it streams ({streams}) but {name} has no stream")
        if info.mock and mock_side(protocol_id).fixtures is not None and found.fixtures is None:
            raise FactsError(f"{protocol_id}: its mock reads fixtures but {name} has none")
        return found
    raise FactsError(f"{protocol_id}: no test facts (a FACTS in {' or '.join(tried)})")


def mocked() -> list[str]:
    """The discovered protocols that have a mock side, sorted: what the mock's generic tests loop over."""
    return sorted(pid for pid, info in PROTOCOLS.items() if info.mock)


def streamed() -> list[str]:
    return [pid for pid in mocked() if facts(pid).stream is not None]


def with_fixtures() -> list[str]:
    return [pid for pid in mocked() if facts(pid).fixtures is not None]


def stream_of(protocol_id: str) -> Stream:
    found = facts(protocol_id).stream
    assert found is not None, f"{protocol_id} has no stream facts"
    return found


def fixtures_of(protocol_id: str) -> Fixtures:
    found = facts(protocol_id).fixtures
    assert found is not None, f"{protocol_id} has no fixtures facts"
    return found
