"""``--shard K/N``: one protocol's work cut into units, and the units dealt to N runners.

A run's work is a list of units that does not depend on N: each (stage, operation) pair of the
property-based phase and its stateful stage, each range of the model-based phase's sequences (a
seed range: ``MODEL_CHUNK`` sequences drawn from a seed of their own), each scenario requirement.
A single run does every unit; shard K of N does the units ``deal`` gives it, so the N shards
together do the single run's work exactly once, and ``conformance merge`` folds their tallies the
way the single run folds its own (``merge.py``). The deal is a pure function of the units and N:
every runner computes the same one without talking to the others.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from specs.documents import Spec

SCHEMA_STAGES = ("examples", "coverage", "fuzzing")
"""schemathesis's per-operation stages; its stateful stage is one unit of its own."""
STATEFUL = "stateful"
MODEL_CHUNK = 5
"""Sequences per model-based unit: the default run's count, so a default run is one unit, as it
always was (the same seed, the same sequences)."""


@dataclass(frozen=True, slots=True)
class Shard:
    index: int
    """1-based."""
    count: int

    @classmethod
    def parse(cls, text: str) -> Shard:
        """``K/N`` with 1 <= K <= N, else ValueError saying what is wrong."""
        k, sep, n = text.partition("/")
        if not sep or not k.strip().isdigit() or not n.strip().isdigit():
            raise ValueError(f"--shard takes K/N, e.g. 2/4 (got {text!r})")
        shard = cls(int(k), int(n))
        if shard.count < 1 or not 1 <= shard.index <= shard.count:
            raise ValueError(f"--shard {text}: K must be between 1 and N, and N at least 1")
        return shard

    @property
    def whole(self) -> bool:
        return self.count == 1

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


WHOLE = Shard(1, 1)


@dataclass(frozen=True, slots=True)
class Unit:
    phase: str
    key: str
    """Unique within the phase: ``fuzzing POST /tasks``, ``stateful``, ``sequences 5-9``, a requirement id."""
    weight: float
    """Its expected cost in requests, to balance the deal (never read for anything else)."""

    @property
    def name(self) -> str:
        return f"{self.phase}:{self.key}"


def schema_unit(stage: str, operation: str, weight: float) -> Unit:
    return Unit("schema", f"{stage} {operation}" if stage != STATEFUL else STATEFUL, weight)


SCENARIO_WEIGHT = 3.0
"""A scenario requirement costs about what three generated cases do (bench/README.md §3: 80-220 ms
each against 20-40 ms a case on a busy machine)."""
MODEL_CALL_WEIGHT = 0.05
"""A model-based call costs a twentieth of a generated case (1,492 calls in 2 s against 1,749
cases in 53 s, Agent Protocol at --max-examples 100: no schemathesis between it and the target)."""
CALLS_PER_STEP = 7
"""A model step is a write and the reads that compare every route showing it."""


def schema_units(spec: Spec, max_examples: int) -> list[Unit]:
    """The property-based phase's units, each weighed by the cases it is expected to send: a stage
    per operation (coverage grows with the request's schema, measured at about 3 x nodes^1.5
    cases), and the stateful stage (about 6 cases per example on Agent Protocol, none where no
    create is read back)."""
    units = []
    for op in spec.operations():
        nodes = _schema_nodes(spec, [op.definition.get("parameters", []), op.definition.get("requestBody", {})])
        weights = {"examples": 2.0, "coverage": 3.0 * max(nodes, 1) ** 1.5, "fuzzing": float(max_examples)}
        units += [schema_unit(stage, op.label, weights[stage]) for stage in SCHEMA_STAGES]
    # schemathesis infers its stateful links from a create whose path another operation extends
    # with a parameter (POST /tasks, GET /tasks/{id}); without one the stage sends nothing
    ops = list(spec.operations())
    linked = any(a.method == "post" and any(b.path.startswith(a.path.rstrip("/") + "/{") for b in ops) for a in ops)
    units.append(schema_unit(STATEFUL, "", 6.0 * max_examples if linked else 1.0))
    return units


def _schema_nodes(spec: Spec, node: Any, depth: int = 0) -> int:
    if depth > 12:
        return 0
    if isinstance(node, dict):
        if "$ref" in node:
            return _schema_nodes(spec, spec.resolve(node), depth + 1)
        return 1 + sum(_schema_nodes(spec, v, depth + 1) for k, v in node.items() if k not in _PROSE)
    if isinstance(node, list):
        return sum(_schema_nodes(spec, v, depth + 1) for v in node)
    return 0


_PROSE = {"description", "example", "examples", "summary", "title"}


def model_units(sequences: int, steps: int) -> list[Unit]:
    """The model-based phase's sequences in ranges of ``MODEL_CHUNK`` (the last may be shorter)."""
    units = []
    for first in range(0, sequences, MODEL_CHUNK):
        n = min(MODEL_CHUNK, sequences - first)
        weight = n * steps * CALLS_PER_STEP * MODEL_CALL_WEIGHT
        units.append(Unit("model", f"sequences {first}-{first + n - 1}", weight))
    return units


def scenario_units(requirement_ids: Iterable[str]) -> list[Unit]:
    return [Unit("scenario", rid, SCENARIO_WEIGHT) for rid in requirement_ids]


def chunk_of(unit: Unit) -> tuple[int, int]:
    """The (first, count) of a model unit's sequences."""
    first, last = unit.key.removeprefix("sequences ").split("-")
    return int(first), int(last) - int(first) + 1


def chunk_seed(seed: int, first: int) -> int:
    """A model unit's own seed: the run's ``--seed`` for the first range (what a default run always
    drew), a digest of (seed, first sequence) for the others, so no two ranges draw alike."""
    if first == 0:
        return seed
    return int.from_bytes(hashlib.sha256(f"{seed}:{first}".encode()).digest()[:4], "big")


def deal(units: Sequence[Unit], count: int) -> list[list[Unit]]:
    """The units of each of ``count`` shards (index 0 is shard 1/N): heaviest first, each to the
    shard with the least weight so far (the lowest index on a tie), the units of each shard in
    their original order. Deterministic: the same units and count give the same deal anywhere."""
    load = [0.0] * count
    owner: dict[str, int] = {}
    for unit in sorted(units, key=lambda u: (-u.weight, u.name)):
        k = min(range(count), key=lambda i: (load[i], i))
        owner[unit.name] = k
        load[k] += unit.weight
    return [[u for u in units if owner[u.name] == k] for k in range(count)]


def mine(units: Sequence[Unit], shard: Shard) -> list[Unit]:
    return list(units) if shard.whole else deal(units, shard.count)[shard.index - 1]


def keys(units: Iterable[Unit], phase: str) -> list[str]:
    return [u.key for u in units if u.phase == phase]
