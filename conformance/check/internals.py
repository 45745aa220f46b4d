"""Every use the suite makes of a library's internals, where the library has no public hook.

The suite bounds schemathesis's exchanges (a stalled target must not hold a run), corrects two of
its checks (fair refusals; multipart files), reads its stateful links, and keeps Hypothesis from
mining the suite's own constants. None of that has a public API, so each internal is named here
once, imported lazily (schemathesis costs a second to import), and reached through ``get`` or
``replace``. ``tests/conformance/check/test_internals.py`` resolves every entry and checks the
signature of each one the suite calls or wraps: an upgrade that moves one fails that test, naming
the internal and the library's version, instead of a run misbehaving quietly.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import import_module
from importlib.metadata import PackageNotFoundError, version
from typing import Any

__all__ = ["INTERNALS", "Internal", "InternalMoved", "get", "replace"]


@dataclass(frozen=True)
class Internal:
    module: str
    attribute: str
    """Empty for the module itself."""
    why: str
    parameters: tuple[str, ...] | None = None
    """The leading parameter names of a callable the suite calls or wraps (checked by the test)."""
    optional: bool = False
    """The suite works around a bug of some releases only; its absence is not a move."""

    @property
    def library(self) -> str:
        return self.module.split(".", 1)[0]


INTERNALS: dict[str, Internal] = {
    "schemathesis.request": Internal(
        "schemathesis.transport.requests",
        "_request",
        "the stall guard wraps every exchange of the property-based phase in the run's bounds",
        ("session", "data", "max_stream_events"),
    ),
    "schemathesis.is_event_stream": Internal(
        "schemathesis.core.transport", "is_event_stream", "an event stream's exchange gets the stream budget"
    ),
    "schemathesis.iter_event_stream": Internal(
        "schemathesis.transport.requests",
        "_iter_event_stream",
        "it reads an event stream by the raw body's read1, where the phase ends it at its end event",
        ("response",),
    ),
    "schemathesis.stream_cut_short": Internal(
        "schemathesis.core.transport", "STREAM_CUT_SHORT_ATTRIBUTE", "a stream schemathesis cut short is a stall"
    ),
    "schemathesis.engine.events": Internal("schemathesis.engine.events", "", "the phase reads the engine's events"),
    "schemathesis.engine.from_schema": Internal(
        "schemathesis.engine", "from_schema", "the phase runs the engine itself, as the CLI does", ("schema",)
    ),
    "schemathesis.not_set": Internal("schemathesis.core", "NOT_SET", "a case without a body"),
    "schemathesis.parameter_location": Internal(
        "schemathesis.core.parameters", "ParameterLocation", "the agent-name hook names a case's path parameter"
    ),
    "schemathesis.positive_data_acceptance": Internal(
        "schemathesis.specs.openapi.checks",
        "_openapi_positive_data_acceptance",
        "a 4xx for a case the document leaves open is a fair refusal, not a failure",
        ("ctx", "response", "case"),
    ),
    "schemathesis.form_body_is_valid_as_sent": Internal(
        "schemathesis.specs.openapi.checks",
        "_form_body_is_valid_as_sent",
        "a multipart file part is validated as the string its schema describes (4.32.x)",
        ("response", "case", "media_type"),
        optional=True,
    ),
    "schemathesis.binary": Internal("schemathesis.transport.serialization", "Binary", "a multipart file part"),
    "schemathesis.result_ok": Internal("schemathesis.core.result", "Ok", "the operations a schema could load"),
    "schemathesis.collect_transitions": Internal(
        "schemathesis.specs.openapi.stateful",
        "collect_transitions",
        "whether a stateful run reads back what it created (applicability)",
        ("operations",),
    ),
    "schemathesis.classify_root_transitions": Internal(
        "schemathesis.specs.openapi.stateful",
        "classify_root_transitions",
        "the stateful run's root operations (applicability)",
        ("operations", "transitions"),
    ),
    "urllib3.HTTPConnection": Internal(
        "urllib3.connection", "HTTPConnection", "the stall guard adopts each socket, to end a stalled exchange"
    ),
    "hypothesis.local_constants": Internal(
        "hypothesis.internal.conjecture.providers",
        "_get_local_constants",
        "the run keeps Hypothesis from drawing constants mined from the modules the process holds",
        (),
    ),
    "hypothesis.constants_cache": Internal(
        "hypothesis.internal.conjecture.providers", "CONSTANTS_CACHE", "cleared with the mined constants"
    ),
    "hypothesis.global_constants": Internal(
        "hypothesis.internal.conjecture.providers",
        "GLOBAL_CONSTANTS",
        "the corpus of hostile strings Hypothesis maintains (check/hostile.py)",
    ),
    "hypothesis.Constants": Internal(
        "hypothesis.internal.constants_ast", "Constants", "the empty pool of mined constants", ()
    ),
}


class InternalMoved(RuntimeError):
    """A library internal the suite relies on is not where this kit expects it."""

    def __init__(self, name: str, internal: Internal, cause: BaseException) -> None:
        try:
            found = version(internal.library)
        except PackageNotFoundError:
            found = "not installed"
        super().__init__(
            f"{internal.module}.{internal.attribute} ({name}: {internal.why}) is not there in "
            f"{internal.library} {found}: {cause}. The kit leans on it because the library has no "
            "public hook; conformance/check/internals.py lists every such use."
        )
        self.name = name
        self.internal = internal


def module_of(name: str) -> Any:
    """The module holding the internal ``name`` (an entry of ``INTERNALS``)."""
    internal = INTERNALS[name]
    try:
        return import_module(internal.module)
    except ImportError as exc:
        raise InternalMoved(name, internal, exc) from exc


def get(name: str, default: Any = ...) -> Any:
    """The internal ``name``; ``default`` when it is optional and absent."""
    internal = INTERNALS[name]
    module = module_of(name)
    if not internal.attribute:
        return module
    try:
        return getattr(module, internal.attribute)
    except AttributeError as exc:
        if internal.optional and default is not ...:
            return default
        raise InternalMoved(name, internal, exc) from exc


def replace(name: str, value: Any) -> Any:
    """Put ``value`` in place of the internal ``name``; returns what was there (to put it back)."""
    original = get(name)
    setattr(module_of(name), INTERNALS[name].attribute, value)
    return original
