"""Named faults: each makes the mock violate one requirement in one realistic way.

They exist so the conformance suite can prove it catches what it claims to catch, and so client
developers can see how their code copes with a broken server (``--fault NAME``). A fault is data:
which protocol, which requirements it breaks, and how: an edit of one operation's JSON answer
(``mutate``), skipped request validation, disabled auth, or a behaviour the protocol's handlers
switch on. Those behaviours are one typed object per protocol (a ``Switches`` subclass in its
``faults.py``), resolved once when the protocol is mounted: a handler reads ``on.step_never_last``,
and a misspelt fault is an error rather than a switch that is silently never on.
"""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, fields
from typing import Any, ClassVar, Self

from .hostile import REFUSES, Hostile, Surrogates
from .reply import Reply
from .wire import CONTROLS, PLAIN, Wire

Mutation = Callable[[Reply], None]
"""Edits a ``Reply`` (body, status, headers, content_type) in place."""


@dataclass(frozen=True, slots=True)
class Fault:
    name: str
    protocol: str
    breaks: tuple[str, ...]
    """Requirement ids a correct suite must report failed when this fault is active."""
    description: str
    operation: str | None = None
    mutate: Mutation | None = None
    skip_validation: bool = False
    disables_auth: bool = False
    hangs: bool = False
    """The server holds a connection open: test it with a short client timeout."""
    control: bool = False
    """A passing control: a fault-like variant the document allows (a fair refusal, another fair
    choice), which breaks nothing; selfcheck requires that no requirement fails against it."""
    advises: tuple[str, ...] = ()
    """Practice requirements (observed upstream behaviour, not the document) this fault does
    otherwise than real servers: a correct suite reports them advice, never failed."""
    wire: Wire = PLAIN
    """How the protocol's answers are written on the wire (``mockserver/wire.py``): the wire's
    passing controls, each one choice the RFCs under the documents leave to a server."""
    touches: tuple[str, ...] = ()
    """Operations beyond ``operation`` whose answers the fault changes (an agent lookup every
    operation makes) or whose effect it shows (a list that omits what an update changed): faults
    over one operation do not combine (``conformance/selfcheck/composition.py``)."""
    hostile: Hostile | None = None
    """How ``operation`` takes hostile bodies (``mockserver/hostile.py``), when not as the mock does."""

    @property
    def operations(self) -> frozenset[str]:
        """Every operation whose answers it changes: ``operation`` and ``touches``."""
        return frozenset((self.operation,) if self.operation else ()) | frozenset(self.touches)

    @property
    def representation_only(self) -> bool:
        """A wire control: it changes how answers are written, never what they say or which are given."""
        return self.wire != PLAIN

    def __post_init__(self) -> None:
        if self.control == bool(self.breaks):
            raise ValueError(f"fault {self.name!r}: a control breaks nothing, and any other fault breaks something")


def fault_maker(protocol: str) -> Callable[..., Fault]:
    """``_fault = fault_maker("agent-protocol")``; then ``_fault(name, breaks, description, **how)``."""

    def make(name: str, breaks: tuple[str, ...], description: str, **how: Any) -> Fault:
        return Fault(name=name, protocol=protocol, breaks=breaks, description=description, **how)

    return make


class FaultSet:
    """The faults active in one server; empty in normal runs, so every lookup is cheap."""

    def __init__(self, faults: Iterable[Fault] = ()) -> None:
        self._faults = {f.name: f for f in faults}
        self.disables_auth = any(f.disables_auth for f in self._faults.values())

    def __contains__(self, name: object) -> bool:
        return name in self._faults

    def __iter__(self) -> Iterator[Fault]:
        return iter(self._faults.values())

    def __bool__(self) -> bool:
        return bool(self._faults)

    def wire(self, protocol: str) -> Wire:
        """How one protocol's answers are written: its wire controls' choices together."""
        wire = PLAIN
        for fault in self._faults.values():
            if fault.protocol == protocol:
                wire |= fault.wire
        return wire

    def skips_validation(self, operation_id: str) -> bool:
        return any(f.skip_validation and f.operation == operation_id for f in self._faults.values())

    def hostile(self, operation_id: str) -> Hostile:
        """How one operation takes hostile bodies: its hostile faults' choices together."""
        mine = [f.hostile for f in self._faults.values() if f.operation == operation_id and f.hostile is not None]
        if not mine:
            return REFUSES
        kept = next((h.surrogates for h in mine if h.surrogates is not Surrogates.REFUSED), Surrogates.REFUSED)
        falsy_as = next((h.falsy_as for h in mine if h.falsy_as is not None), None)
        return Hostile(falsy_as, kept, any(h.echoed for h in mine))

    def keeps_surrogates(self, protocol: str) -> bool:
        """Some fault of ``protocol`` stores lone surrogates, so its answers holding one fail (500)."""
        return any(
            f.protocol == protocol and f.hostile is not None and f.hostile.surrogates is Surrogates.KEPT
            for f in self._faults.values()
        )

    def mutation(self, operation_id: str) -> Mutation | None:
        edits = [f.mutate for f in self._faults.values() if f.mutate and f.operation == operation_id]
        if not edits:
            return None

        def apply(reply: Reply) -> None:
            for edit in edits:
                edit(reply)

        return apply


def wire_controls(make: Callable[..., Fault], prefix: str, streams: str | None) -> tuple[Fault, ...]:
    """The wire's passing controls for one protocol (``mockserver/wire.py``), named ``<prefix>-wire-*``:
    every protocol gets the ones of JSON and HTTP, a protocol whose streams are server-sent events
    (``streams == "sse"``) the SSE ones too."""
    return tuple(
        make(f"{prefix}-wire-{name}", (), f"control: {description}", control=True, wire=wire)
        for name, description, wire, sse in CONTROLS
        if not sse or streams == "sse"
    )


TEXT_COLUMN_BYTES = 65535
"""Bytes of UTF-8 a MySQL TEXT column keeps: where the cut-text faults cut."""


@dataclass(frozen=True, slots=True)
class TextEdits:
    """How a store that is not faithful to text keeps it: the edge faults' edits of the texts a
    protocol echoes, each off in normal runs (then ``apply`` returns the text as it came)."""

    nfc: bool = False
    """Normalised to NFC: combining marks composed."""
    trimmed: bool = False
    """Whitespace at the ends dropped."""
    column: bool = False
    """Cut to TEXT_COLUMN_BYTES of UTF-8, silently."""
    astral: bool = False
    """Characters beyond U+FFFF (emoji) as '?', as a 3-byte utf8 column stores them."""
    controls: bool = False
    """Control characters (tab, newline, ...) removed."""
    json_escaped: bool = False
    """JSON-encoded once too often: quotes, backslashes, controls and non-ASCII as escapes."""

    def apply(self, text: str) -> str:
        if self.nfc:
            text = unicodedata.normalize("NFC", text)
        if self.trimmed:
            text = text.strip()
        if self.column:
            text = text.encode()[:TEXT_COLUMN_BYTES].decode("utf-8", "ignore")
        if self.astral:
            text = "".join("?" if ord(c) > 0xFFFF else c for c in text)
        if self.controls:
            text = "".join(c for c in text if unicodedata.category(c) != "Cc")
        if self.json_escaped:
            text = json.dumps(text)[1:-1]
        return text

    def apply_all(self, value: Any) -> Any:
        """Every string of a JSON value edited, object keys included."""
        if isinstance(value, str):
            return self.apply(value)
        if isinstance(value, dict):
            return {self.apply_all(k): self.apply_all(v) for k, v in value.items()}
        return [self.apply_all(v) for v in value] if isinstance(value, list) else value


class Switches:
    """Base of a protocol's behaviour faults: a frozen dataclass of bool fields, all false in normal runs.

    A field is named after its fault without the protocol's prefix (``ap-step-never-last`` ->
    ``step_never_last``); ``field(default=False, metadata={"fault": NAME})`` names one whose name
    is no identifier.
    """

    prefix: ClassVar[str]

    @classmethod
    def fault_names(cls) -> dict[str, str]:
        """Field name -> fault name."""
        return {f.name: f.metadata.get("fault") or f"{cls.prefix}-{f.name.replace('_', '-')}" for f in fields(cls)}  # type: ignore[arg-type]

    @classmethod
    def of(cls, faults: FaultSet) -> Self:
        return cls(**{name: fault in faults for name, fault in cls.fault_names().items()})
