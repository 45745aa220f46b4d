"""The generic requirements every document gets, decided by the property-based phase
(``phases/schema/``): ids ``<PREFIX>-SCHEMA-NNN``, one per schemathesis check. Which apply is
derived from the document (applicability.py): one no server could fail against a document is not
registered for it, so nothing is reported passed that tested nothing. Declared here, beneath the
phases, because a protocol's suite holds them."""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass

from specs.documents import Spec

from ..verdicts.requirements import Level, Registry, Requirement
from .applicability import some_header_can_fail, some_status_can_be_undocumented, something_created_is_read_back


@dataclass(frozen=True, slots=True)
class SchemaCheck:
    number: str
    level: Level
    check: str
    """schemathesis check name."""
    statement: str
    applies: Callable[[Spec], bool] = lambda spec: True
    depends_on_state: str = ""
    """Why a real server's own state can move this verdict between same-seed runs (Requirement's)."""
    from_traffic: bool = True
    """One exchange decides it, so the proxy's document judge does; a check that needs a sequence
    is decided from traffic only by a protocol whose passive judge follows it (its descriptor's
    ``schema_from_traffic``)."""


SCHEMA_CHECKS = (
    SchemaCheck("001", Level.MUST, "not_a_server_error", "No request, valid or invalid, makes the server answer 5xx"),
    SchemaCheck(
        "002",
        Level.MUST,
        "status_code_conformance",
        "Every response status is one the document lists for the operation",
        some_status_can_be_undocumented,
    ),
    SchemaCheck(
        "003",
        Level.MUST,
        "content_type_conformance",
        "Every response Content-Type is one the document lists for that status",
    ),
    SchemaCheck(
        "004",
        Level.MUST,
        "response_headers_conformance",
        "Response headers the document requires are present and valid",
        some_header_can_fail,
    ),
    SchemaCheck(
        "005",
        Level.MUST,
        "response_schema_conformance",
        "Every response body matches the schema the document gives for it",
        depends_on_state="judges every body the server answers, lists of everything it holds included (what "
        "earlier generated requests, and earlier runs, created there): a body off its schema may be met only in "
        "some runs",
    ),
    SchemaCheck(
        "006",
        Level.SHOULD,
        "negative_data_rejection",
        "Requests that violate the document are rejected with a 4xx status",
    ),
    SchemaCheck(
        "007",
        Level.SHOULD,
        "positive_data_acceptance",
        "Requests that conform to the document are not rejected as invalid",
    ),
    SchemaCheck(
        "008",
        Level.SHOULD,
        "ensure_resource_availability",
        "A resource the server reports created can be read back (stateful phase)",
        something_created_is_read_back,
        from_traffic=False,
    ),
    SchemaCheck(
        "009",
        Level.SHOULD,
        "use_after_free",
        "A deleted resource is no longer served (stateful phase)",
        lambda spec: any(op.method == "delete" for op in spec.operations()),
        from_traffic=False,
    ),
    SchemaCheck(
        "010",
        Level.MUST,
        "ignored_auth",
        "Operations that declare security reject requests without valid credentials",
        lambda spec: bool(spec.raw.get("security")),
    ),
)


def register_schema_requirements(
    registry: Registry, spec: Spec, from_traffic: Collection[str] = (), *, every: bool = False
) -> None:
    """The generic requirements ``spec`` gets; ``from_traffic`` names the sequence checks the
    protocol's passive judge decides from traffic as well. ``every``: also those that do not apply
    to ``spec`` (for reading reports that name which applied: deciding it imports schemathesis)."""
    prefix = spec.info.prefix
    for sc in SCHEMA_CHECKS:
        if every or sc.applies(spec):
            registry.add(
                Requirement(
                    f"{prefix}-SCHEMA-{sc.number}",
                    sc.level,
                    sc.statement,
                    f"{spec.info.document} (every operation)",
                    spec.info.id,
                    phase="schema",
                    depends_on_state=sc.depends_on_state,
                    from_traffic=sc.from_traffic or sc.check in from_traffic,
                ),
                None,
            )
