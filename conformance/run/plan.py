"""A run's plan: everything the phases need, built once from one loaded document.

``plan(options)`` loads the protocol's document (with its profile) once, builds the suite from
that same document (so the schema requirements registered are those of the document tested),
selects the requirements (``--level``, ``--only``, ``--skip``, ``--phase``) and groups them by the
phase that decides them, and cuts their work into units (``shards.py``), of which a ``--shard``
keeps its own. The phases read the plan; none loads, parses or compiles the document again.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from weakref import WeakKeyDictionary

from specs.documents import Spec, load
from specs.schemas import SchemaSet

from ..check.http import Limits
from ..check.waiting import progress_bound
from ..verdicts.requirements import Check, Requirement
from ..verdicts.sets import RequirementSet, framed, named
from .options import PHASE_NAMES, RunOptions
from .shards import Unit, keys, mine, model_units, scenario_units, schema_units
from .suites import ProtocolSuite, suite


@dataclass(frozen=True, slots=True)
class RunPlan:
    options: RunOptions
    """As given, or, once the target is up, with its base URL and tokens (``at``)."""
    spec: Spec
    schemas: SchemaSet
    """The document's compiled validators, shared by every check of the run."""
    suite: ProtocolSuite
    checks: tuple[Check, ...]
    """The selected requirements' checks, in report order."""
    limits: Limits
    units: tuple[Unit, ...] = ()
    """This run's share of the work (all of it unless ``--shard``): ``units_of`` a phase."""
    elsewhere: tuple[str, ...] = ()
    """Selected requirements another shard decides (``--shard``): in the campaign, not in this run."""
    frozen: RequirementSet | None = None
    """The requirement set scored (``--requirements``): the rest is reported not scored."""

    def units_of(self, phase: str) -> list[str]:
        return keys(self.units, phase)

    def phase(self, name: str) -> tuple[Check, ...]:
        """The selected checks the phase ``name`` decides, in report order."""
        return tuple(c for c in self.checks if c.requirement.phase == name)

    def requirements(self, name: str) -> tuple[Requirement, ...]:
        return tuple(c.requirement for c in self.phase(name))

    @property
    def by_phase(self) -> Mapping[str, tuple[Requirement, ...]]:
        return {name: self.requirements(name) for name in PHASE_NAMES}

    @property
    def auth_headers(self) -> dict[str, str]:
        """The bearer token, when the document declares security (the generated and modelled
        traffic sends it; scenario checks choose their own credentials)."""
        token = self.options.token
        return {"Authorization": f"Bearer {token}"} if token and self.suite.needs_auth else {}

    def at(self, options: RunOptions) -> RunPlan:
        """The same plan against a started target (its base URL and tokens filled in)."""
        return replace(self, options=options)


def frozen_set(options: RunOptions) -> RequirementSet | None:
    """The set ``--requirements`` names (checked by ``usage.check_run``), or None."""
    return named(options.requirement_set, options.protocol) if options.requirement_set else None


def selected(protocol_suite: ProtocolSuite, options: RunOptions) -> list[Check]:
    """The requirements the options select, at the levels and authorities of the set they score."""
    registry = framed(protocol_suite.registry, frozen_set(options))
    checks = [c for c in registry if options.level.includes(c.requirement.level)]
    if options.only:
        checks = [c for c in checks if c.requirement.id.startswith(options.only)]
    if options.skip:
        checks = [c for c in checks if not c.requirement.id.startswith(options.skip)]
    phases = set(options.phases)
    return [c for c in checks if c.requirement.phase in phases]


_schemas: WeakKeyDictionary[Spec, SchemaSet] = WeakKeyDictionary()


def schemas_of(spec: Spec) -> SchemaSet:
    """One SchemaSet per loaded document, so runs in one process (the self-check's, the pytest
    plugin's, one per requirement) compile each schema once."""
    found = _schemas.get(spec)
    if found is None:
        found = _schemas[spec] = SchemaSet(spec.raw)
    return found


def limits_for(options: RunOptions) -> Limits:
    return Limits(timeout=options.timeout, stream_seconds=progress_bound(options.timeout, options.budget_s))


def work(spec: Spec, protocol_suite: ProtocolSuite, options: RunOptions, checks: list[Check]) -> list[Unit]:
    """The units of the selected requirements' work (shards.py), the same for every shard."""
    phases = {c.requirement.phase for c in checks}
    units: list[Unit] = []
    if "schema" in phases:
        units += schema_units(spec, options.max_examples, protocol_suite.streaming_operations)
    model = protocol_suite.model
    if "model" in phases and model is not None:
        units += model_units(options.sequences, model.steps * options.model_step_factor, model.calls_per_step)
    units += scenario_units(c.requirement.id for c in checks if c.requirement.phase == "scenario")
    return units


def plan(options: RunOptions) -> RunPlan:
    spec = load(options.protocol, options.profile)
    protocol_suite = suite(options.protocol, options.profile)
    checks = selected(protocol_suite, options)
    units = mine(work(spec, protocol_suite, options, checks), options.shard)
    everything = [c.requirement.id for c in checks]
    if not options.shard.whole:  # a shard decides the scenarios dealt to it, and the phases it has units of
        has = {u.phase for u in units}
        scenarios = set(keys(units, "scenario"))
        checks = [c for c in checks if c.requirement.phase in has - {"scenario"} or c.requirement.id in scenarios]
    ours = {c.requirement.id for c in checks}
    elsewhere = tuple(rid for rid in everything if rid not in ours)
    return RunPlan(
        options,
        spec,
        schemas_of(spec),
        protocol_suite,
        tuple(checks),
        limits_for(options),
        tuple(units),
        elsewhere,
        frozen_set(options),
    )
