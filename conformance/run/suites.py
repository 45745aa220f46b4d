"""Each protocol's suite: a pure function of one loaded document and the protocol's suite side,
found through its manifest (``suite:`` names the package, conformance/protocols/<id>/ for the kit's
own). ``requirements`` declares its requirements and scenario checks, an optional ``model`` its
model for the model-based phase; the generic schema requirements come from that same document."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import cache
from types import ModuleType
from typing import TYPE_CHECKING

from specs.documents import PROTOCOLS, Spec, load, protocol

from ..check.model import Model
from ..verdicts.requirements import Registry
from .schema_requirements import register_schema_requirements

if TYPE_CHECKING:
    from ..check.context import Context


@dataclass(frozen=True, slots=True)
class ProtocolSuite:
    id: str
    registry: Registry
    streaming_operations: tuple[str, ...]
    """Operations whose answers are streams, validated frame by frame by scenario checks."""
    needs_auth: bool
    stream_media_types: tuple[str, ...] = ()
    """Media types a streaming operation's answer may be labelled with besides the documented one
    (a module's ``STREAM_MEDIA_TYPES``): the schema phase counts them as documented."""
    schema_expected_statuses: Mapping[str, Mapping[str, tuple[str, ...]]] = field(default_factory=dict)
    """Per operationId and schemathesis check, statuses the document prescribes beyond the check's
    defaults (a module's ``SCHEMA_EXPECTED_STATUSES``); each entry should say why in the module."""
    model: Model | None = None
    """The protocol's model for the model-based phase (its ``model`` module), if any."""
    known_path_values: Callable[[Context], Mapping[str, tuple[str, ...]]] | None = None
    """Path parameter values that name resources which exist on the target (a module's
    ``known_path_values``, e.g. NeuroSan's discovered agent), mixed into the generated cases so
    they reach the operation and not only a 404."""


def optional_part(package: str, part: str) -> ModuleType | None:
    """A protocol's optional module (``model``, ``passive``), or None when it has none; an import
    error inside a module that exists still surfaces."""
    name = f"{package}.{part}"
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name != name:
            raise
        return None


def build(spec: Spec) -> ProtocolSuite:
    """The suite of ``spec``'s protocol for exactly that document (its profile included): a fresh
    registry holding the checks its modules declare (``requirements``, then ``model``, whose import
    declares its requirements) and the schema requirements that document gets. Nothing shared is
    changed, so two documents of one protocol give two suites that cannot disagree with them."""
    info = spec.info
    module = importlib.import_module(f"{info.suite}.requirements")
    model_module = optional_part(info.suite, "model")  # imported first: it declares into ``module.registry``
    declared: Registry = module.registry
    registry = Registry(info.id)
    for check in declared:
        registry.add(check.requirement, check.run)
    register_schema_requirements(registry, spec)
    return ProtocolSuite(
        info.id,
        registry,
        info.streaming_operations,
        bool(spec.raw.get("security")),
        tuple(getattr(module, "STREAM_MEDIA_TYPES", ())),
        dict(getattr(module, "SCHEMA_EXPECTED_STATUSES", {})),
        None if model_module is None else model_module.MODEL,
        getattr(module, "known_path_values", None),
    )


def suite(protocol_id: str, profile: str | None = None) -> ProtocolSuite:
    """The suite for a protocol's document as ``specs.documents.load`` gives it (once per process
    and profile); an unknown id is a KeyError naming the known ones."""
    protocol(protocol_id)
    return _suite(protocol_id, profile)


@cache
def _suite(protocol_id: str, profile: str | None) -> ProtocolSuite:
    return build(load(protocol_id, profile))


def unique_ids(suites: Iterable[ProtocolSuite]) -> None:
    """Refuse a requirement id two protocols declare: reports, baselines and ``--only`` name a
    requirement by its id alone."""
    owner: dict[str, str] = {}
    for protocol_suite in suites:
        for check in protocol_suite.registry:
            rid = check.requirement.id
            if owner.setdefault(rid, protocol_suite.id) != protocol_suite.id:
                raise ValueError(f"requirement id {rid} is declared by both {owner[rid]} and {protocol_suite.id}")


def all_suites() -> dict[str, ProtocolSuite]:
    """Every discovered protocol's suite (default documents), their ids checked unique."""
    suites = {pid: suite(pid) for pid in sorted(PROTOCOLS)}
    unique_ids(suites.values())
    return suites
