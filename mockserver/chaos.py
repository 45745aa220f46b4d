"""Chaos rules: a mock that stays correct but is slow, busy or unreliable, on purpose.

``--fault`` makes the mock violate its protocol; chaos never does. Every answer a chaos rule
produces is one the protocol allows a real server on a bad day: an added delay, a 429 with
Retry-After, a 503 or a 500 in the protocol's own error shape, a reset connection, a stream whose
frames drip, that is cut after N frames, or that carries the protocol's in-stream error frame.

A rule names a protocol and an operation (either may be left out to match all), the fraction of
matching requests it acts on (``rate``) and its effects. Each rule draws from its own generator,
seeded from the chaos seed and the rule's position, so the same requests in the same order meet
the same chaos on every run.

The same rule is written as a mapping (``--chaos FILE`` in YAML, the admin API in JSON)::

    seed: 7
    rules:
      - {protocol: sgr-agent-core, operation: createChatCompletion, error: 429, rate: 0.5}
      - {protocol: agent-protocol, latency: {lognormal: {median: 0.05, sigma: 0.5}}}
      - {protocol: neuro-san, drip: 0.2, cut_after: 3}

or on the command line as ``--chaos-rule 'protocol=sgr-agent-core,error=429,rate=0.5'``
(``latency=0.2``, ``latency=uniform:0.1:0.5``, ``latency=lognormal:0.05:0.5``).
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from specs.documents import PROTOCOLS

MAX_RULES = 100
MAX_DELAY = 60.0
"""Longest delay one draw may add (seconds): a rule can slow the mock, never pin it."""
ERROR_STATUSES = (429, 500, 503)
RETRYABLE = (429, 503)
"""Statuses sent with Retry-After."""
DEFAULT_RETRY_AFTER = 1
MAX_FRAMES = 1_000_000
STREAMED = tuple(sorted(pid for pid, info in PROTOCOLS.items() if info.stream_error is not None))
"""Protocols with streamed answers (their manifest's ``stream_error``); only these have stream
effects to apply."""
FIELDS = (
    "protocol",
    "operation",
    "rate",
    "latency",
    "error",
    "retry_after",
    "reset",
    "drip",
    "cut_after",
    "error_frame_after",
)
EFFECTS = ("latency", "error", "reset", "drip", "cut_after", "error_frame_after")


class ChaosError(ValueError):
    """A rule that cannot be applied; the message says what is wrong, for a usage error or a 400."""


def error_frame(protocol_id: str, message: str) -> dict[str, Any]:
    """The protocol's in-band stream error saying ``message``, as its manifest declares it."""
    return PROTOCOLS[protocol_id].stream_error_frame(message)


@dataclass(frozen=True, slots=True)
class Latency:
    kind: str
    """fixed (a seconds), uniform (between a and b), lognormal (median a, sigma b)."""
    a: float
    b: float = 0.0

    def draw(self, rng: random.Random) -> float:
        if self.kind == "fixed":
            value = self.a
        elif self.kind == "uniform":
            value = rng.uniform(self.a, self.b)
        else:
            value = self.a * math.exp(self.b * rng.gauss(0.0, 1.0))
        return min(MAX_DELAY, max(0.0, value))

    def to_json(self) -> dict[str, Any]:
        if self.kind == "fixed":
            return {"fixed": self.a}
        if self.kind == "uniform":
            return {"uniform": [self.a, self.b]}
        return {"lognormal": {"median": self.a, "sigma": self.b}}

    @classmethod
    def parse(cls, value: Any) -> Latency:
        if isinstance(value, int | float) and not isinstance(value, bool):
            return cls("fixed", _seconds("latency", value))
        if not isinstance(value, Mapping) or len(value) != 1:
            raise ChaosError(
                "latency must be seconds or one of {fixed: S}, {uniform: [LOW, HIGH]}, "
                "{lognormal: {median: S, sigma: X}}"
            )
        ((kind, spec),) = value.items()
        if kind == "fixed":
            return cls("fixed", _seconds("latency.fixed", spec))
        if kind == "uniform":
            if not isinstance(spec, list | tuple) or len(spec) != 2:
                raise ChaosError("latency.uniform must be [LOW, HIGH]")
            low, high = (_seconds("latency.uniform", v) for v in spec)
            if low > high:
                raise ChaosError(f"latency.uniform: LOW {low} is above HIGH {high}")
            return cls("uniform", low, high)
        if kind == "lognormal":
            if not isinstance(spec, Mapping) or set(spec) != {"median", "sigma"}:
                raise ChaosError("latency.lognormal must be {median: S, sigma: X}")
            sigma = _number("latency.lognormal.sigma", spec["sigma"], 0.0, 5.0)
            return cls("lognormal", _seconds("latency.lognormal.median", spec["median"]), sigma)
        raise ChaosError(f"unknown latency distribution {kind!r}: fixed, uniform or lognormal")


@dataclass(frozen=True, slots=True)
class StreamChaos:
    """What a rule does to a streamed answer, frame by frame."""

    protocol: str
    drip: float = 0.0
    cut_after: int | None = None
    error_frame_after: int | None = None


@dataclass(frozen=True, slots=True)
class Rule:
    protocol: str | None = None
    operation: str | None = None
    rate: float = 1.0
    latency: Latency | None = None
    error: int | None = None
    retry_after: int | None = None
    reset: bool = False
    drip: float | None = None
    cut_after: int | None = None
    error_frame_after: int | None = None

    def matches(self, protocol: str, operation: str) -> bool:
        return (self.protocol is None or self.protocol == protocol) and (
            self.operation is None or self.operation == operation
        )

    @property
    def streams(self) -> bool:
        return self.drip is not None or self.cut_after is not None or self.error_frame_after is not None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for name in FIELDS:
            value = getattr(self, name)
            if value is None or value is False or (name == "rate" and value == 1.0):
                continue
            out[name] = value.to_json() if isinstance(value, Latency) else value
        return out

    @classmethod
    def parse(cls, data: Any, operations: Mapping[str, Iterable[str]]) -> Rule:
        """A rule from its mapping; ``operations`` are the served protocols' operation ids."""
        if not isinstance(data, Mapping):
            raise ChaosError(f"a rule must be a mapping, got {type(data).__name__}")
        unknown = sorted(set(data) - set(FIELDS))
        if unknown:
            raise ChaosError(f"unknown rule field(s) {', '.join(map(str, unknown))}; known: {', '.join(FIELDS)}")
        protocol = data.get("protocol")
        operation = data.get("operation")
        if protocol is not None and protocol not in operations:
            raise ChaosError(f"protocol {protocol!r} is not served here; served: {', '.join(sorted(operations))}")
        if operation is not None:
            scope = [protocol] if protocol is not None else list(operations)
            if not any(operation in operations[p] for p in scope):
                raise ChaosError(
                    f"no served protocol{' ' + protocol if protocol else ''} has an operation {operation!r}"
                )
        error = data.get("error")
        if error is not None and error not in ERROR_STATUSES:
            raise ChaosError(f"error must be one of {', '.join(map(str, ERROR_STATUSES))}, got {error!r}")
        retry_after = data.get("retry_after")
        if retry_after is not None:
            if error not in RETRYABLE:
                raise ChaosError("retry_after goes with error 429 or 503")
            retry_after = int(_number("retry_after", retry_after, 0, 3600))
        reset = data.get("reset", False)
        if not isinstance(reset, bool):
            raise ChaosError("reset must be true or false")
        rule = cls(
            protocol=protocol,
            operation=operation,
            rate=_number("rate", data.get("rate", 1.0), 0.0, 1.0),
            latency=Latency.parse(data["latency"]) if data.get("latency") is not None else None,
            error=error,
            retry_after=retry_after,
            reset=reset,
            drip=_seconds("drip", data["drip"]) if data.get("drip") is not None else None,
            cut_after=_count("cut_after", data.get("cut_after")),
            error_frame_after=_count("error_frame_after", data.get("error_frame_after")),
        )
        if not any(getattr(rule, name) not in (None, False) for name in EFFECTS):
            raise ChaosError(f"a rule needs an effect: one of {', '.join(EFFECTS)}")
        if rule.streams and protocol is not None and protocol not in STREAMED:
            raise ChaosError(
                f"{protocol} streams nothing: drip, cut_after and error_frame_after apply to {' and '.join(STREAMED)}"
            )
        if rule.error_frame_after is not None and rule.cut_after is not None:
            raise ChaosError("a stream is either cut (cut_after) or ended by an error frame (error_frame_after)")
        return rule


def parse_cli(text: str) -> dict[str, Any]:
    """``protocol=p,operation=o,error=429,rate=0.5`` -> the rule's mapping (validated by Rule.parse)."""
    out: dict[str, Any] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        name, sep, value = part.partition("=")
        if not sep or not value:
            raise ChaosError(f"expected NAME=VALUE in {text!r}, got {part!r}")
        name = name.strip().replace("-", "_")
        value = value.strip()
        if name == "latency":
            kind, _, args = value.partition(":")
            if not args:
                out[name] = _float(name, kind)
            elif kind == "uniform" and len(args.split(":")) == 2:
                out[name] = {"uniform": [_float(name, v) for v in args.split(":")]}
            elif kind == "lognormal" and len(args.split(":")) == 2:
                median, sigma = (_float(name, v) for v in args.split(":"))
                out[name] = {"lognormal": {"median": median, "sigma": sigma}}
            else:
                raise ChaosError(f"latency is S, uniform:LOW:HIGH or lognormal:MEDIAN:SIGMA, got {value!r}")
        elif name in ("protocol", "operation"):
            out[name] = value
        elif name == "reset":
            out[name] = value.lower() in ("1", "true", "yes")
        elif name in ("rate", "drip"):
            out[name] = _float(name, value)
        else:
            try:
                out[name] = int(value)
            except ValueError:
                raise ChaosError(f"{name} must be a whole number, got {value!r}") from None
    return out


@dataclass(slots=True)
class Decision:
    """What chaos does to one request: all matching rules' effects, combined."""

    delay: float = 0.0
    error: int | None = None
    retry_after: int = DEFAULT_RETRY_AFTER
    reset: bool = False
    stream: StreamChaos | None = None
    notes: list[str] = field(default_factory=list)


class Chaos:
    """The active rules; empty by default, and then never consulted (see hooks.py)."""

    def __init__(self, rules: Iterable[Rule] = (), seed: int = 0) -> None:
        self.rules: tuple[Rule, ...] = ()
        self.seed = seed
        self._rngs: list[random.Random] = []
        self.replace(rules, seed)

    def __bool__(self) -> bool:
        return bool(self.rules)

    def replace(self, rules: Iterable[Rule], seed: int | None = None) -> None:
        """New rules, each with a fresh generator: chaos is reproducible from this moment on."""
        rules = tuple(rules)
        if len(rules) > MAX_RULES:
            raise ChaosError(f"at most {MAX_RULES} chaos rules, got {len(rules)}")
        self.seed = self.seed if seed is None else seed
        self.rules = rules
        self._rngs = [random.Random(f"{self.seed}:{i}") for i in range(len(rules))]

    def add(self, rule: Rule) -> None:
        self.replace((*self.rules, rule))

    def to_json(self) -> dict[str, Any]:
        return {"seed": self.seed, "rules": [r.to_json() for r in self.rules]}

    def decide(self, protocol: str, operation: str) -> Decision | None:
        decision: Decision | None = None
        for rule, rng in zip(self.rules, self._rngs, strict=True):
            if not rule.matches(protocol, operation):
                continue
            if rule.rate < 1.0 and rng.random() >= rule.rate:
                continue
            decision = decision or Decision()
            if rule.latency is not None:
                delay = rule.latency.draw(rng)
                decision.delay += delay
                decision.notes.append(f"latency {delay * 1000:.0f} ms")
            if rule.reset and not decision.reset:
                decision.reset = True
                decision.notes.append("connection reset")
            if rule.error is not None and decision.error is None:
                decision.error = rule.error
                decision.retry_after = rule.retry_after if rule.retry_after is not None else DEFAULT_RETRY_AFTER
                decision.notes.append(f"error {rule.error}")
            if rule.streams and decision.stream is None and protocol in STREAMED:
                decision.stream = StreamChaos(protocol, rule.drip or 0.0, rule.cut_after, rule.error_frame_after)
                decision.notes.append(_stream_note(decision.stream))
        return decision


def _stream_note(chaos: StreamChaos) -> str:
    parts = []
    if chaos.drip:
        parts.append(f"drip {chaos.drip * 1000:.0f} ms")
    if chaos.cut_after is not None:
        parts.append(f"cut after {chaos.cut_after} frame(s)")
    if chaos.error_frame_after is not None:
        parts.append(f"error frame after {chaos.error_frame_after} frame(s)")
    return "stream " + ", ".join(parts)


def _number(name: str, value: Any, low: float, high: float) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or math.isnan(value):
        raise ChaosError(f"{name} must be a number, got {value!r}")
    if not low <= value <= high:
        raise ChaosError(f"{name} must be between {low:g} and {high:g}, got {value!r}")
    return float(value)


def _seconds(name: str, value: Any) -> float:
    return _number(name, value, 0.0, MAX_DELAY)


def _count(name: str, value: Any) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise ChaosError(f"{name} must be a whole number of frames, got {value!r}")
    if not 0 <= value <= MAX_FRAMES:
        raise ChaosError(f"{name} must be between 0 and {MAX_FRAMES}, got {value}")
    return value


def _float(name: str, value: str) -> float:
    try:
        return float(value)
    except ValueError:
        raise ChaosError(f"{name} must be a number, got {value!r}") from None


def load_document(data: Any, operations: Mapping[str, Iterable[str]]) -> tuple[list[Rule], int | None]:
    """``{seed?, rules: [...]}`` (or a bare list of rules) -> (rules, seed)."""
    if isinstance(data, list):
        data = {"rules": data}
    if not isinstance(data, Mapping):
        raise ChaosError("a chaos document is {seed: N, rules: [...]} or a list of rules")
    unknown = sorted(set(data) - {"seed", "rules"})
    if unknown:
        raise ChaosError(f"unknown field(s) {', '.join(map(str, unknown))} in the chaos document (seed, rules)")
    seed = data.get("seed")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
        raise ChaosError(f"seed must be a whole number, got {seed!r}")
    rules = data.get("rules") or []
    if not isinstance(rules, list):
        raise ChaosError("rules must be a list")
    if len(rules) > MAX_RULES:
        raise ChaosError(f"at most {MAX_RULES} chaos rules, got {len(rules)}")
    parsed = []
    for i, rule in enumerate(rules):
        try:
            parsed.append(Rule.parse(rule, operations))
        except ChaosError as exc:
            raise ChaosError(f"rule {i + 1}: {exc}") from None
    return parsed, seed
