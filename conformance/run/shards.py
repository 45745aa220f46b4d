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
import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from specs.documents import Operation, Spec

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
    """The milliseconds it is expected to keep a runner busy on a free core (CPU, and the waits the
    suite itself makes), to balance the deal (never read for anything else)."""

    @property
    def name(self) -> str:
        return f"{self.phase}:{self.key}"


def schema_unit(stage: str, operation: str, weight: float) -> Unit:
    return Unit("schema", f"{stage} {operation}" if stage != STATEFUL else STATEFUL, weight)


CASE_MS = {"examples": 4.0, "coverage": 2.0, "fuzzing": 4.0, STATEFUL: 6.0}
"""Milliseconds a generated case of each stage keeps a runner busy on a free core: the CPU of the
suite's side and of its embedded target's, schemathesis waiting for nothing else (wall and CPU
agree within 5 %). Measured per unit by bench/unit_cost.py on the four protocols' deep campaigns
(bench/README.md §9): 3.2-4.9 ms a fuzzing case, 1.4-3.1 a coverage case, 4-10 a stateful one."""
STREAMED_CASE_MS = 30.0
"""A fuzzing case of an operation whose answer streams (22-45 ms measured): most fuzzing cases are
valid requests, so the target streams its whole answer and the suite reads and judges every frame.
Coverage's cases are mostly refused up front and cost what other operations' do."""
SCENARIO_MS = 50.0
"""A scenario requirement: 35 ms of CPU and 53 ms of wall time on average (Agent Protocol's; the
others' use less): they wait more than they work."""
MODEL_CALL_MS = 3.0
"""A call of the model-based phase: 1.1-1.5 ms of CPU in all four protocols, 3.0-3.2 ms of wall
time, the rest the pause the suite leaves between two of its own calls (``check.http.GAP_S``), so a
model range waits about as long as it works. Weighing its CPU alone dealt Agent Protocol's two
shards 10.6 and 11.1 s of CPU but 14.9 and 20.6 s of wall time."""


def schema_units(spec: Spec, max_examples: int, streaming: Collection[str] = ()) -> list[Unit]:
    """The property-based phase's units, each weighed by its expected cases times what a case of its
    stage costs (``CASE_MS``; ``STREAMED_CASE_MS`` for fuzzing an operation whose answer streams: its
    id in ``streaming``, or a documented text/event-stream answer). A stage per operation: coverage
    grows with the request's schema (measured at about 3 x nodes^1.5 cases), fuzzing sends
    ``max_examples`` unless the operation takes no input at all (then one case); and the stateful
    stage (about 6 cases per example, none where schemathesis finds no link to follow)."""
    units = []
    ops = list(spec.operations())
    for op in ops:
        inputs = [op.definition.get("parameters", []), op.definition.get("requestBody")]
        nodes = _schema_nodes(spec, inputs)
        fuzz_ms = (
            STREAMED_CASE_MS if op.operation_id in streaming or _streams(spec, op.definition) else CASE_MS["fuzzing"]
        )
        cases = {
            "examples": 2.0,
            "coverage": 3.0 * max(nodes, 1) ** 1.5,
            "fuzzing": float(max_examples) if nodes else 1.0,
        }
        per_case = {**CASE_MS, "fuzzing": fuzz_ms}
        units += [schema_unit(stage, op.label, cases[stage] * per_case[stage]) for stage in SCHEMA_STAGES]
    stateful = 6.0 * max_examples if _linked(spec, ops) else 0.0
    units.append(schema_unit(STATEFUL, "", max(stateful, 1.0) * CASE_MS[STATEFUL]))
    return units


def _linked(spec: Spec, ops: Sequence[Operation]) -> bool:
    """Whether schemathesis's stateful stage has links to follow: it infers them from an answer's
    property that another operation takes as a path parameter (a task's ``task_id`` into
    ``/tasks/{task_id}``); without one the stage sends nothing."""
    parameters = {name for op in ops for name in re.findall(r"{([^}/]+)}", op.path)}
    answered: set[str] = set()
    for op in ops:
        _properties(spec, op.definition.get("responses", {}), answered)
    return bool(parameters & answered)


def _streams(spec: Spec, definition: Mapping[str, Any]) -> bool:
    for response in (definition.get("responses") or {}).values():
        response = spec.resolve(response) if "$ref" in response else response
        if any(m.startswith("text/event-stream") for m in response.get("content") or {}):
            return True
    return False


def _properties(spec: Spec, node: Any, into: set[str], depth: int = 0) -> None:
    if depth > 12:
        return
    if isinstance(node, dict):
        if "$ref" in node:
            _properties(spec, spec.resolve(node), into, depth + 1)
            return
        if isinstance(node.get("properties"), dict):
            into.update(node["properties"])
        for value in node.values():
            _properties(spec, value, into, depth + 1)
    elif isinstance(node, list):
        for value in node:
            _properties(spec, value, into, depth + 1)


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


def model_units(sequences: int, steps: int, calls_per_step: float = 7.0) -> list[Unit]:
    """The model-based phase's sequences in ranges of ``MODEL_CHUNK`` (the last may be shorter),
    each weighed by its calls (the model's ``calls_per_step``) times ``MODEL_CALL_MS``."""
    units = []
    for first in range(0, sequences, MODEL_CHUNK):
        n = min(MODEL_CHUNK, sequences - first)
        weight = n * steps * calls_per_step * MODEL_CALL_MS
        units.append(Unit("model", f"sequences {first}-{first + n - 1}", weight))
    return units


def scenario_units(requirement_ids: Iterable[str]) -> list[Unit]:
    return [Unit("scenario", rid, SCENARIO_MS) for rid in requirement_ids]


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
