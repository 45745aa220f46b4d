"""Each protocol's suite: a pure function of one loaded document and the protocol's suite side,
declared by its descriptor (``SUITE``, run/descriptor.py) in the package its manifest names
(``suite:``, conformance/protocols/<id>/ for the kit's own): its requirements and scenario checks,
its model for the model-based phase and the requirements that model decides, its passive judge; the
generic schema requirements come from that same document."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cache

from specs.documents import PROTOCOLS, Spec, load, protocol

from ..check.model import Model
from ..check.passive import Checks
from ..check.signature import Signature
from ..verdicts.requirements import Registry
from .descriptor import KnownPathValues, check_against, discover
from .schema_requirements import register_schema_requirements


@dataclass(frozen=True, slots=True)
class ProtocolSuite:
    id: str
    registry: Registry
    streaming_operations: tuple[str, ...]
    """Operations whose answers are streams, validated frame by frame by scenario checks."""
    needs_auth: bool
    stream_media_types: tuple[str, ...] = ()
    """Media types a streaming operation's answer may be labelled with besides the documented one
    (the descriptor's): the schema phase counts them as documented."""
    schema_expected_statuses: Mapping[str, Mapping[str, tuple[str, ...]]] = field(default_factory=dict)
    """Per operationId and schemathesis check, statuses the document prescribes beyond the check's
    defaults (the descriptor's ``expected_statuses``)."""
    model: Model | None = None
    """The protocol's model for the model-based phase, if any."""
    known_path_values: KnownPathValues | None = None
    """Path parameter values that name resources which exist on the target (the descriptor's),
    mixed into the generated cases so they reach the operation and not only a 404."""
    passive: type[Checks] | None = None
    """What the proxy judges from live traffic: the requirements registered ``from_traffic``."""
    signatures: tuple[Signature, ...] = ()
    """Answers only servers of this protocol give (the descriptor's): the preflight's recognition."""


def build(spec: Spec, *, every_schema_requirement: bool = False) -> ProtocolSuite:
    """The suite of ``spec``'s protocol for exactly that document (its profile included): a fresh
    registry holding the checks its descriptor declares (its registry's, then its model's) and the
    schema requirements that document gets (``every_schema_requirement``: also those it does not,
    for reading reports, which name the ones that applied). Nothing shared is changed, so two
    documents of one protocol give two suites that cannot disagree with them."""
    info = spec.info
    declared = discover(info.id)
    check_against(declared, spec)
    registry = Registry(info.id)
    for check in declared.registry:
        registry.add(check.requirement, check.run)
    if declared.model is not None:
        for requirement in declared.model.requirements:
            registry.add(requirement, None)
    register_schema_requirements(registry, spec, declared.schema_from_traffic, every=every_schema_requirement)
    return ProtocolSuite(
        info.id,
        registry,
        info.streaming_operations,
        bool(spec.raw.get("security")),
        declared.stream_media_types,
        declared.expected_statuses,
        declared.model,
        declared.known_path_values,
        declared.passive,
        declared.signatures,
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
