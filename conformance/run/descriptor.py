"""A protocol's suite side, declared: one typed descriptor per protocol package, checked when found.

A protocol's suite package (its manifest's ``suite``) exports ``SUITE = declare(protocol_id, ...)``
with its parts: ``registry`` (its requirements and scenario checks, required), ``model`` (its model
for the model-based phase, which carries the requirements it decides), ``passive`` (the ``Checks``
class that judges its requirements registered ``from_traffic`` in live traffic), ``schema_from_traffic``
(the generic schema checks, by schemathesis name, that judge also decides), ``stream_media_types``,
``expected_statuses``, ``known_path_values`` and ``signatures`` (answers only its servers give, the
preflight's recognition). Nothing is found by attribute name: an unknown or
missing part, a part of the wrong kind, or a package without a descriptor is a ``DescriptorError``
naming the protocol and the part when the protocol is declared or discovered, and a part that names
what the document lacks (an operationId, a schemathesis check) when its suite is built, the way
pluggy rejects an unknown hook.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from typing import Any

from specs.documents import Spec, SpecError, protocol

from ..check.context import Context
from ..check.model import Model
from ..check.passive import Checks
from ..check.signature import Signature
from ..verdicts.requirements import Registry
from .schema_requirements import SCHEMA_CHECKS

KnownPathValues = Callable[[Context], Mapping[str, tuple[str, ...]]]


class DescriptorError(SpecError):
    """A protocol's suite side is not declared as it must be; the message names the protocol and the part."""

    def __init__(self, protocol_id: str, problem: str) -> None:
        super().__init__(protocol_id, problem)


@dataclass(frozen=True, slots=True)
class SuiteProtocol:
    protocol: str
    registry: Registry
    """Its requirements and their scenario checks (``requirements.py``)."""
    model: Model | None = None
    """Its model for the model-based phase, with the requirements it decides (``model.py``)."""
    passive: type[Checks] | None = None
    """What the proxy judges from live traffic (``passive.py``): the requirements of ``registry``
    registered ``from_traffic``, and the generic ones of ``schema_from_traffic``."""
    schema_from_traffic: tuple[str, ...] = ()
    """Generic schema checks (schemathesis names) that need a sequence of exchanges, which
    ``passive`` follows; the rest of the traffic-decidable ones the document judge decides."""
    stream_media_types: tuple[str, ...] = ()
    """Media types a streaming operation's answer may be labelled with besides the documented one:
    the schema phase and the proxy count them as documented."""
    expected_statuses: Mapping[str, Mapping[str, tuple[str, ...]]] = field(default_factory=dict)
    """Per operationId and schemathesis check, statuses the document prescribes beyond the check's
    defaults; each entry should say why where it is written."""
    known_path_values: KnownPathValues | None = None
    """Path parameter values that name resources which exist on the target (e.g. NeuroSan's
    discovered agent), mixed into the generated cases so they reach the operation, not only a 404."""
    signatures: tuple[Signature, ...] = ()
    """Answers only servers of this protocol give: the preflight asks them of the target, and a
    target that gives none is another protocol's server (exit 2). Without any, the preflight falls
    back to the document's parameterless GETs (a target answering 404 to each is not one)."""


PARTS = tuple(f.name for f in fields(SuiteProtocol) if f.name != "protocol")
CHECK_NAMES = frozenset(sc.check for sc in SCHEMA_CHECKS)
A_CHECK = f"a schemathesis check of the schema phase ({', '.join(sorted(CHECK_NAMES))})"
BY_OPERATION = "a mapping operationId -> schemathesis check -> statuses"


def _check(protocol_id: str, part: str, ok: bool, wanted: str, value: Any) -> None:
    if not ok:
        raise DescriptorError(protocol_id, f"the suite descriptor's {part} must be {wanted}, got {value!r}")


def _strings(value: Any) -> bool:
    return isinstance(value, tuple) and all(isinstance(v, str) for v in value)


def declare(protocol_id: str, **parts: Any) -> SuiteProtocol:
    """The descriptor ``SUITE`` of a protocol's suite package, its parts checked."""
    unknown = sorted(set(parts) - set(PARTS))
    if unknown:
        raise DescriptorError(
            protocol_id,
            f"unknown part(s) {', '.join(unknown)} of its suite descriptor; the parts are {', '.join(PARTS)}",
        )
    registry = parts.get("registry")
    if registry is None:
        raise DescriptorError(protocol_id, "its suite descriptor has no registry (a Registry of its requirements)")
    _check(protocol_id, "registry", isinstance(registry, Registry), "a Registry", registry)
    if registry.protocol != protocol_id:
        raise DescriptorError(protocol_id, f"the suite descriptor's registry is {registry.protocol!r}'s")
    model = parts.get("model")
    if model is not None:
        _check(protocol_id, "model", isinstance(model, Model), "a Model", model)
        for requirement in model.requirements:
            if requirement.protocol != protocol_id or requirement.phase != "model":
                raise DescriptorError(
                    protocol_id,
                    f"the suite descriptor's model decides {requirement.id}, which is not a model requirement "
                    f"of {protocol_id} (protocol {requirement.protocol!r}, phase {requirement.phase!r})",
                )
    passive = parts.get("passive")
    if passive is not None:
        _check(
            protocol_id, "passive", isinstance(passive, type) and issubclass(passive, Checks), "a Checks class", passive
        )
    schema_from_traffic = parts.get("schema_from_traffic", ())
    _check(protocol_id, "schema_from_traffic", _strings(schema_from_traffic), "a tuple of names", schema_from_traffic)
    for name in schema_from_traffic:
        _check(protocol_id, "schema_from_traffic", name in CHECK_NAMES, A_CHECK, name)
    judged = [c.requirement.id for c in registry if c.requirement.from_traffic]
    if (judged or schema_from_traffic) and passive is None:
        raise DescriptorError(
            protocol_id,
            f"its suite descriptor has no passive (a Checks class) to judge "
            f"{', '.join(judged or schema_from_traffic)} from traffic",
        )
    media = parts.get("stream_media_types", ())
    _check(protocol_id, "stream_media_types", _strings(media), "a tuple of media types", media)
    statuses = parts.get("expected_statuses", {})
    _check(protocol_id, "expected_statuses", isinstance(statuses, Mapping), BY_OPERATION, statuses)
    for op_id, by_check in statuses.items():
        _check(protocol_id, "expected_statuses", isinstance(by_check, Mapping), BY_OPERATION, {op_id: by_check})
        for name, codes in by_check.items():
            _check(protocol_id, f"expected_statuses of {op_id}", name in CHECK_NAMES, A_CHECK, name)
            _check(protocol_id, f"expected_statuses of {op_id}", _strings(codes), "a tuple of status strings", codes)
    known = parts.get("known_path_values")
    if known is not None:
        _check(protocol_id, "known_path_values", callable(known), "a function of a Context", known)
    signatures = parts.get("signatures", ())
    _check(
        protocol_id,
        "signatures",
        isinstance(signatures, tuple) and all(isinstance(s, Signature) for s in signatures),
        "a tuple of Signature",
        signatures,
    )
    return SuiteProtocol(protocol_id, registry, model, passive, schema_from_traffic, media, statuses, known, signatures)


def discover(protocol_id: str) -> SuiteProtocol:
    """The protocol's suite descriptor, found through its manifest's ``suite`` package."""
    try:
        info = protocol(protocol_id)
    except KeyError as exc:
        raise DescriptorError(protocol_id, str(exc.args[0])) from None
    module = importlib.import_module(info.suite)
    found = getattr(module, "SUITE", None)
    if found is None:
        raise DescriptorError(
            protocol_id, f"its suite package {info.suite} exports no SUITE (conformance.run.descriptor.declare)"
        )
    if not isinstance(found, SuiteProtocol):
        raise DescriptorError(protocol_id, f"{info.suite}.SUITE is a {type(found).__name__}, not a SuiteProtocol")
    if found.protocol != protocol_id:
        raise DescriptorError(protocol_id, f"{info.suite}.SUITE declares the protocol {found.protocol!r}")
    return found


def check_against(descriptor: SuiteProtocol, spec: Spec) -> None:
    """What the descriptor names of the document exists in it: every operationId of
    ``expected_statuses``. A misspelt one would otherwise be silently ignored."""
    operations = {op.operation_id for op in spec.operations()}
    missing = sorted(set(descriptor.expected_statuses) - operations)
    if missing:
        raise DescriptorError(
            descriptor.protocol,
            f"the suite descriptor's expected_statuses name operation(s) {', '.join(missing)} that "
            f"{spec.info.document} does not have",
        )
