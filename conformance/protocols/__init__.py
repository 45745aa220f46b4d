"""One module per protocol: its requirements and scenario checks, nothing generic."""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass, field

from ground.specs import PROTOCOLS, load

from ..model.engine import Model
from ..requirements import Registry
from ..schema_phase import register_schema_requirements

MODULES = {
    "agent-protocol": "conformance.protocols.agent_protocol.requirements",
    "neuro-san": "conformance.protocols.neuro_san.requirements",
    "sgr-agent-core": "conformance.protocols.sgr_agent_core.requirements",
    "synapse-agent": "conformance.protocols.synapse_agent.requirements",
}


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


_suites: dict[str, ProtocolSuite] = {}


def _model(protocol_id: str) -> Model | None:
    """Importing a model module registers its requirements (phase ``model``) in the protocol's registry."""
    name = MODULES[protocol_id].rsplit(".", 1)[0] + ".model"
    try:
        module = importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name != name:
            raise
        return None
    return module.MODEL  # type: ignore[no-any-return]


def suite(protocol_id: str) -> ProtocolSuite:
    if protocol_id not in _suites:
        if protocol_id not in PROTOCOLS:
            raise KeyError(f"unknown protocol {protocol_id!r}; known: {', '.join(sorted(PROTOCOLS))}")
        module = importlib.import_module(MODULES[protocol_id])
        registry: Registry = module.registry
        model = _model(protocol_id)
        spec = load(protocol_id)
        register_schema_requirements(registry, spec)
        _suites[protocol_id] = ProtocolSuite(
            protocol_id,
            registry,
            tuple(getattr(module, "STREAMING_OPERATIONS", ())),
            bool(spec.raw.get("security")),
            tuple(getattr(module, "STREAM_MEDIA_TYPES", ())),
            dict(getattr(module, "SCHEMA_EXPECTED_STATUSES", {})),
            model,
        )
    return _suites[protocol_id]
