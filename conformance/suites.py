"""Each protocol's suite, built once from its suite side, found through its manifest (``suite:``
names the package, conformance/protocols/<id>/ for the kit's own): ``requirements`` registers its
requirements and scenario checks, an optional ``model`` its model for the model-based phase; the
generic schema requirements are registered from its document."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import ModuleType
from typing import TYPE_CHECKING

from specs.documents import load, protocol

from .model.engine import Model
from .requirements import Registry
from .schema_phase import register_schema_requirements

if TYPE_CHECKING:
    from .context import Context


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
    """The protocol's model for the model-based phase (``conformance/model/<module>.py``), if any."""
    known_path_values: Callable[[Context], Mapping[str, tuple[str, ...]]] | None = None
    """Path parameter values that name resources which exist on the target (a module's
    ``known_path_values``, e.g. NeuroSan's discovered agent), mixed into the generated cases so
    they reach the operation and not only a 404."""


_suites: dict[str, ProtocolSuite] = {}


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


def _model(package: str) -> Model | None:
    """Importing a model module registers its requirements (phase ``model``) in the protocol's registry."""
    module = optional_part(package, "model")
    return None if module is None else module.MODEL


def suite(protocol_id: str) -> ProtocolSuite:
    if protocol_id not in _suites:
        info = protocol(protocol_id)  # KeyError naming the known ones
        module = importlib.import_module(f"{info.suite}.requirements")
        registry: Registry = module.registry
        model = _model(info.suite)
        spec = load(protocol_id)
        register_schema_requirements(registry, spec)
        _suites[protocol_id] = ProtocolSuite(
            protocol_id,
            registry,
            info.streaming_operations,
            bool(spec.raw.get("security")),
            tuple(getattr(module, "STREAM_MEDIA_TYPES", ())),
            dict(getattr(module, "SCHEMA_EXPECTED_STATUSES", {})),
            model,
            getattr(module, "known_path_values", None),
        )
    return _suites[protocol_id]
