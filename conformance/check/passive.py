"""The passive-check kit: what a protocol's judge of observed traffic is written with.

Each protocol's ``passive`` module (conformance/protocols/<id>/passive.py) defines one ``Checks``
subclass, named by its descriptor; the requirements it decides are those registered with
``from_traffic=True``. The proxy's observer calls its hooks for every exchange (``Observed``,
check/traffic.py) and each records on a ``Verdict`` what the exchange held or broke; what it
remembers between exchanges (tasks created, steps executed, jobs polled) is bounded (``Bounded``).
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from specs.documents import Spec
from specs.schemas import SchemaSet

from .judgments import Facts, Seen, judge
from .streams import Frame
from .traffic import Observed

K = TypeVar("K")
V = TypeVar("V")


class Bounded(OrderedDict[K, V], Generic[K, V]):
    """A mapping that forgets its oldest entries beyond ``limit``: a long proxy run stays bounded."""

    def __init__(self, limit: int = 10_000) -> None:
        super().__init__()
        self.limit = limit

    def __setitem__(self, key: K, value: V) -> None:
        super().__setitem__(key, value)
        self.move_to_end(key)
        while len(self) > self.limit:
            self.popitem(last=False)


@dataclass(slots=True)
class StreamState:
    """One stream being forwarded: its frames so far and what the checks note about it."""

    kind: str
    frames: int = 0
    last: Frame | None = None
    notes: dict[str, Any] = field(default_factory=dict)


class Checks:
    """No passive requirements; subclasses override the hooks they need."""

    settle_s: float = 30.0
    """How long after its stream (or job) ends a server may keep an agent busy before it counts
    as stuck (the observer sets it from the proxy's timeout)."""

    def __init__(self, spec: Spec, schemas: SchemaSet, tokens: tuple[str, ...]) -> None:
        self.spec = spec
        self.schemas = schemas
        self.tokens = tokens

    def stream_kind(self, ex: Observed) -> str | None:
        """``sse`` or ``ndjson`` when the answer is a stream to read frame by frame."""
        return "sse" if ex.content_type == "text/event-stream" else None

    def on_response(self, ex: Observed, v: Verdict) -> None:
        """A whole (non-streamed) answer."""

    def on_broken(self, ex: Observed, v: Verdict, reason: str) -> None:
        """A whole answer that stalled, broke or overflowed after its status and headers."""

    def on_stream_start(self, ex: Observed, v: Verdict, stream: StreamState) -> None:
        """A stream's status and headers, before any frame."""

    def on_frame(self, ex: Observed, v: Verdict, stream: StreamState, frame: Frame) -> None:
        """One complete frame, as it was forwarded."""

    def on_stream_end(self, ex: Observed, v: Verdict, stream: StreamState, error: str | None) -> None:
        """The stream ended: cleanly (``error`` None) or broken, with the reason."""

    def violations_of(self, schema_name: str, value: Any, limit: int = 3) -> str:
        found = self.schemas.violations({"$ref": f"#/components/schemas/{schema_name}"}, value, limit)
        return "; ".join(map(str, found))


class Verdict:
    """Per exchange: requirement id -> None (exercised and held) or the first reason it broke."""

    def __init__(self) -> None:
        self.results: dict[str, str | None] = {}
        self.judgments: dict[str, tuple[str, dict[str, Any]]] = {}
        """Requirement id -> the judgment (name, facts) that broke it: the finding names it, as a run's does."""

    def ok(self, rid: str) -> None:
        self.results.setdefault(rid, None)

    def fail(self, rid: str, reason: str) -> None:
        if self.results.get(rid) is None:
            self.results[rid] = reason

    def judged(self, rid: str, name: str, seen: Seen, facts: Facts, what: str = "") -> bool:
        """Exercised: held when judgment ``name`` finds no problem in ``seen``, else broken with its
        first, the judgment and its facts kept for the finding (the run's checks call the same one)."""
        return self.found(rid, name, facts, judge(name, seen, facts), what)

    def found(self, rid: str, name: str, facts: Facts, problems: list[str], what: str = "") -> bool:
        """What judgment ``name`` found, judged in parts (a stream's events as they came, through
        the judgment's own per-part rule): held when no problem, else broken as ``judged`` records it."""
        if not problems:
            self.ok(rid)
            return True
        if self.results.get(rid) is None:
            self.judgments[rid] = (name, dict(facts))
        self.fail(rid, f"{what}: {problems[0]}" if what else problems[0])
        return False

    def check(self, rid: str, condition: object, reason: str) -> bool:
        """Exercised: held when ``condition`` is true, else broken with ``reason``."""
        if condition:
            self.ok(rid)
        else:
            self.fail(rid, reason)
        return bool(condition)

    @property
    def violations(self) -> dict[str, str]:
        return {rid: reason for rid, reason in self.results.items() if reason is not None}
