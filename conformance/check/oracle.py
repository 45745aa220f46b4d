"""The value oracle: is this value a plausible fact, not merely of the right type?

Each function returns a list of problems (empty: the value holds), worded for a vendor. Times are
judged against the wall clock of the exchange that carried them, widened by a stated skew: a
server's clock may differ from ours, but not by hours, and a value made in an exchange cannot
predate the exchange by more than the skew.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal

from .shown import shown

SKEW_S = 300.0
"""How far a target's clock may be from ours before its timestamps count as wrong (5 minutes)."""

EpochUnit = Literal["s", "ms"]
_PER_SECOND = {"s": 1, "ms": 1000}

GOOGLE_RPC_CODES = {
    0: "OK",
    1: "CANCELLED",
    2: "UNKNOWN",
    3: "INVALID_ARGUMENT",
    4: "DEADLINE_EXCEEDED",
    5: "NOT_FOUND",
    6: "ALREADY_EXISTS",
    7: "PERMISSION_DENIED",
    8: "RESOURCE_EXHAUSTED",
    9: "FAILED_PRECONDITION",
    10: "ABORTED",
    11: "OUT_OF_RANGE",
    12: "UNIMPLEMENTED",
    13: "INTERNAL",
    14: "UNAVAILABLE",
    15: "DATA_LOSS",
    16: "UNAUTHENTICATED",
}
"""google.rpc.Code (googleapis/google/rpc/code.proto): the only values a ``Status.code`` may take."""


@dataclass(frozen=True, slots=True)
class Window:
    """Wall-clock bounds (epoch seconds) of the exchange(s) a value came from."""

    start: float
    end: float

    def widened(self, skew: float = SKEW_S) -> tuple[float, float]:
        return self.start - skew, self.end + skew


def _at(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, UTC).isoformat(timespec="seconds")


_RFC3339 = re.compile(r"^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})?$")


def parse_datetime(value: Any, *, naive_is_utc: bool = False) -> tuple[datetime | None, str]:
    """(the instant, '') or (None, why not). ``naive_is_utc``: a value without an offset is read
    as UTC (where a document allows local naive stamps, they are judged as UTC plus the skew)."""
    if not isinstance(value, str) or not _RFC3339.match(value):
        return None, f"{shown(value)} is not an ISO 8601 / RFC 3339 date-time"
    try:
        parsed = datetime.fromisoformat(value.replace("z", "Z").replace("Z", "+00:00"))
    except ValueError as exc:
        return None, f"{shown(value)} is not a date-time ({exc})"
    if parsed.tzinfo is None:
        if not naive_is_utc:
            return None, f"{shown(value)} has no UTC offset, so it names no instant"
        parsed = parsed.replace(tzinfo=UTC)
    return parsed, ""


def datetime_problems(
    value: Any, window: Window, what: str, *, skew: float = SKEW_S, naive_is_utc: bool = False
) -> list[str]:
    """A date-time that parses and lies within ``skew`` of the exchange's wall clock."""
    parsed, why = parse_datetime(value, naive_is_utc=naive_is_utc)
    if parsed is None:
        return [f"{what}: {why}"]
    low, high = window.widened(skew)
    at = parsed.timestamp()
    if not low <= at <= high:
        off = at - window.end if at > high else at - window.start
        return [
            f"{what}: {shown(value)} is {abs(off):.0f} s {'after' if off > 0 else 'before'} the exchange "
            f"({_at(window.start)}..{_at(window.end)}), beyond the {skew:g} s skew allowed"
        ]
    return []


_OFFSET = re.compile(r"([Zz]|[+-]\d{2}:?\d{2})$")


def zoned_problems(value: Any, window: Window, what: str, *, local_span: float) -> list[str]:
    """A date-time a document lets be local time without an offset: without one it may be in any
    zone (within ``local_span`` of the exchange, read as UTC); with one (``Z``, ``+03:00``) it names
    an instant, held to the skew. A local time labelled UTC is then hours off, and says so."""
    aware = isinstance(value, str) and _OFFSET.search(value) is not None
    problems = datetime_problems(value, window, what, skew=SKEW_S if aware else local_span, naive_is_utc=True)
    if aware and problems and not datetime_problems(value, window, what, skew=local_span, naive_is_utc=True):
        problems[0] += ": it carries an offset, so it names an instant (a local time labelled as UTC?)"
    return problems


def epoch_problems(value: Any, unit: EpochUnit, window: Window, what: str, *, skew: float = SKEW_S) -> list[str]:
    """An integer epoch timestamp in the unit the document gives, within the skew of the exchange.
    A value that fits the other unit is named as such: the commonest bug of its kind."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return [f"{what}: {shown(value)} is not a number of {'seconds' if unit == 's' else 'milliseconds'}"]
    low, high = window.widened(skew)
    scale = _PER_SECOND[unit]
    if low * scale <= value <= high * scale:
        return []
    other: EpochUnit = "ms" if unit == "s" else "s"
    names = {"s": "seconds", "ms": "milliseconds"}
    if low * _PER_SECOND[other] <= value <= high * _PER_SECOND[other]:
        return [f"{what}: {shown(value)} is in {names[other]} since the epoch; the document says {names[unit]}"]
    when = _at(value / scale) if abs(value / scale) < 1e11 else "no time"
    return [
        f"{what}: {shown(value)} {names[unit]} since the epoch is {when}, not near the exchange "
        f"({_at(window.start)}..{_at(window.end)})"
    ]


def ordered_problems(first: float, second: float, what_first: str, what_second: str) -> list[str]:
    """``first`` must not come after ``second`` (request before response, start before end)."""
    return [] if first <= second else [f"{what_first} ({shown(first)}) comes after {what_second} ({shown(second)})"]


def rpc_code_problems(value: Any, what: str) -> list[str]:
    """A google.rpc.Code: an integer 0-16. An HTTP status (100-599) sent instead is named as such."""
    if isinstance(value, bool) or not isinstance(value, int):
        return [f"{what}: {shown(value)} is not a google.rpc.Code (an integer 0-16)"]
    if value in GOOGLE_RPC_CODES:
        return []
    if 100 <= value <= 599:
        return [f"{what}: {value} is an HTTP status, not a google.rpc.Code (0-16)"]
    return [f"{what}: {value} is outside google.rpc.Code (0-16)"]
