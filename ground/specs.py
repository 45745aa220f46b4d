"""The protocol registry: the one place that knows each protocol's id, document and base path.

Both halves of the kit load documents through here, so a document is parsed and validated
once per process and a malformed one fails with a message naming the file and the problem.
"""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache, cached_property
from pathlib import Path
from typing import Any

import yaml

HTTP_METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace", "query")


class SpecError(Exception):
    """A protocol document could not be loaded; the message names the file and the problem."""

    def __init__(self, path: Path | str, problem: str) -> None:
        self.path = str(path)
        self.problem = problem
        super().__init__(f"{path}: {problem}")


@dataclass(frozen=True, slots=True)
class ProtocolInfo:
    id: str
    title: str
    document: str
    """Path of the document, relative to the specs folder."""
    prefix: str
    """Requirement-id prefix, e.g. ``AP`` in ``AP-TASK-001``."""
    base_path: str = ""
    """What a server root needs appended so that the document's paths resolve under it."""
    profiles: Mapping[str, str] = field(default_factory=dict)
    """Named overlays (relative paths) merged into the document on request."""


PROTOCOLS: dict[str, ProtocolInfo] = {
    info.id: info
    for info in (
        ProtocolInfo("agent-protocol", "Agent Protocol v1", "agent-protocol/openapi.json", "AP"),
        ProtocolInfo(
            "neuro-san",
            "NeuroSan agent service",
            "neuro-san/openapi.yaml",
            "NS",
            profiles={"upstream": "neuro-san/upstream-extras.yaml"},
        ),
        ProtocolInfo("sgr-agent-core", "SGR Agent Core", "sgr-agent-core/openapi.yaml", "SGR"),
        ProtocolInfo("synapse-agent", "Synapse agent chat", "synapse-agent/openapi.yaml", "SYN", base_path="/repo/v1"),
    )
}


def specs_root() -> Path:
    """The specs folder: packaged next to the code in a wheel, at the repository top otherwise."""
    here = Path(__file__).resolve().parent
    packaged = here / "_specs"
    return packaged if packaged.is_dir() else here.parent / "specs"


def protocol(protocol_id: str) -> ProtocolInfo:
    try:
        return PROTOCOLS[protocol_id]
    except KeyError:
        known = ", ".join(sorted(PROTOCOLS))
        raise KeyError(f"unknown protocol {protocol_id!r}; known: {known}") from None


@dataclass(frozen=True, slots=True)
class Operation:
    method: str
    path: str
    operation_id: str
    definition: Mapping[str, Any]

    @property
    def label(self) -> str:
        return f"{self.method.upper()} {self.path}"


class Spec:
    """A loaded, validated document with the objects built from it, each built once on first use."""

    def __init__(self, info: ProtocolInfo, path: Path, raw: dict[str, Any], profile: str | None) -> None:
        self.info = info
        self.path = path
        self.raw = raw
        self.profile = profile

    @cached_property
    def digest(self) -> str:
        """sha256 of the document as loaded (its profile's overlay merged), in canonical JSON:
        the same contract gives the same digest whatever its file's formatting."""
        canonical = json.dumps(self.raw, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
        return hashlib.sha256(canonical.encode()).hexdigest()

    @property
    def version(self) -> str:
        return str(self.raw.get("openapi", ""))

    def operations(self) -> Iterator[Operation]:
        for path, item in self.raw.get("paths", {}).items():
            for method, definition in item.items():
                if method in HTTP_METHODS:
                    op_id = definition.get("operationId") or f"{method.upper()} {path}"
                    yield Operation(method, path, op_id, definition)

    def resolve(self, node: Any) -> Any:
        """Follow local ``$ref``s (``#/components/responses/NotFound``) to the node they name."""
        return resolve_ref(self.raw, node)

    def operation(self, operation_id: str) -> Operation:
        for op in self.operations():
            if op.operation_id == operation_id:
                return op
        raise KeyError(f"{self.info.id}: no operation {operation_id!r}")

    @cached_property
    def openapi(self) -> Any:
        """The openapi-core ``OpenAPI`` object (request/response validators)."""
        from openapi_core import OpenAPI

        try:
            return OpenAPI.from_dict(self.raw)
        except Exception as exc:  # openapi-core raises several unrelated types
            raise SpecError(self.path, f"openapi-core cannot load it: {exc}") from exc

    def schemathesis_document(
        self, *, server: str | None = None, media_aliases: Mapping[str, Sequence[str]] | None = None
    ) -> dict[str, Any]:
        """A copy of the document as the property-based phase hands it to schemathesis. ``server``
        replaces the document's servers: a target's base URL already carries the base path.
        ``media_aliases`` maps an operationId to media types that label the same body as its
        documented 2xx one (a stream the document calls application/json that servers send as
        json-lines)."""
        raw = copy.deepcopy(self.raw)
        if server is not None:
            raw["servers"] = [{"url": server}]
        for op in Spec(self.info, self.path, raw, self.profile).operations():
            aliases = (media_aliases or {}).get(op.operation_id, ())
            responses = op.definition.get("responses", {})
            for status in [s for s in responses if aliases and str(s).startswith("2")]:
                # inlined first, so that a response shared through $ref keeps its own media types
                response = responses[status] = copy.deepcopy(resolve_ref(raw, responses[status]))
                content = response.get("content") or {}
                for alias in [a for a in aliases if content and a not in content]:
                    content[alias] = copy.deepcopy(next(iter(content.values())))
        return raw

    def schemathesis_schema(
        self,
        config: Mapping[str, Any] | None = None,
        *,
        server: str | None = None,
        media_aliases: Mapping[str, Sequence[str]] | None = None,
    ) -> Any:
        """A fresh schemathesis schema (each run configures its own copy) of
        ``schemathesis_document``, with an optional schemathesis configuration (the keys of
        schemathesis.toml)."""
        import schemathesis

        raw = self.schemathesis_document(server=server, media_aliases=media_aliases)
        try:
            settings = schemathesis.Config.from_dict(dict(config)) if config is not None else None
            return schemathesis.openapi.from_dict(raw, config=settings)
        except Exception as exc:
            raise SpecError(self.path, f"schemathesis cannot load it: {exc}") from exc


def resolve_ref(document: Mapping[str, Any], node: Any) -> Any:
    """``node``, or what its local ``$ref`` chain points at within ``document``."""
    while isinstance(node, Mapping) and isinstance(node.get("$ref"), str) and node["$ref"].startswith("#/"):
        target: Any = document
        for part in node["$ref"].removeprefix("#/").split("/"):
            target = target[part.replace("~1", "/").replace("~0", "~")]
        node = target
    return node


def read_document(path: Path) -> dict[str, Any]:
    """Parse and validate one OpenAPI document, turning every failure into a SpecError."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise SpecError(path, f"cannot read the file ({exc.strerror or exc})") from exc
    except UnicodeDecodeError as exc:
        raise SpecError(path, f"cannot read the file: not UTF-8 ({exc.reason} at byte {exc.start})") from exc
    try:
        raw = json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
    except json.JSONDecodeError as exc:
        raise SpecError(path, f"invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}") from exc
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc)
        raise SpecError(path, f"invalid YAML{where}: {problem}") from exc
    if not isinstance(raw, dict):
        raise SpecError(path, "the document is not a mapping")
    validate_document(path, raw)
    return raw


def validate_document(path: Path, raw: dict[str, Any]) -> None:
    version = raw.get("openapi")
    if not isinstance(version, str) or not version.startswith(("3.0.", "3.1.", "3.2.")):
        raise SpecError(path, f"unsupported OpenAPI version {version!r} (expected 3.0.x, 3.1.x or 3.2.x)")
    dangling = sorted(set(_local_refs(raw)) - set(_targets(raw)))
    if dangling:
        raise SpecError(path, f"dangling $ref: {', '.join(dangling)}")
    from openapi_spec_validator import validate
    from openapi_spec_validator.validation.exceptions import OpenAPIValidationError

    try:
        validate(raw)
    except OpenAPIValidationError as exc:
        where = "/".join(str(p) for p in getattr(exc, "path", ()) or ())
        raise SpecError(path, f"not a valid OpenAPI {version} document at '{where}': {exc.message}") from exc
    except Exception as exc:  # the validator surfaces reference-resolution errors as their own types
        raise SpecError(path, f"not a valid OpenAPI {version} document: {exc}") from exc


def _local_refs(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/"):
            yield ref
        for value in node.values():
            yield from _local_refs(value)
    elif isinstance(node, list):
        for value in node:
            yield from _local_refs(value)


def _targets(raw: dict[str, Any]) -> Iterator[str]:
    def walk(node: Any, pointer: str) -> Iterator[str]:
        yield pointer
        if isinstance(node, dict):
            for key, value in node.items():
                escaped = str(key).replace("~", "~0").replace("/", "~1")
                yield from walk(value, f"{pointer}/{escaped}")

    return walk(raw, "#")


def merge_overlay(base: dict[str, Any], overlay: Mapping[str, Any]) -> dict[str, Any]:
    """Add an overlay's paths and components to a copy of a document; ``x-`` notes are not merged."""
    merged = copy.deepcopy(base)
    merged.setdefault("paths", {}).update(copy.deepcopy(overlay.get("paths", {})))
    for section, entries in overlay.get("components", {}).items():
        merged.setdefault("components", {}).setdefault(section, {}).update(copy.deepcopy(entries))
    return merged


def load(protocol_id: str, profile: str | None = None) -> Spec:
    """Load (once per process) a protocol's document, optionally with a named profile overlay."""
    # one cache key however the profile is passed: ``load(p)`` and ``load(p, None)`` are the same
    # document, and reading and validating it costs about a second
    return _load(protocol_id, profile)


@cache
def _load(protocol_id: str, profile: str | None) -> Spec:
    info = protocol(protocol_id)
    path = specs_root() / info.document
    raw = read_document(path)
    if profile is not None:
        if profile not in info.profiles:
            raise SpecError(path, f"protocol {protocol_id!r} has no profile {profile!r}")
        overlay_path = specs_root() / info.profiles[profile]
        try:
            overlay = yaml.safe_load(overlay_path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
            raise SpecError(overlay_path, f"cannot read the overlay: {exc}") from exc
        if not isinstance(overlay, dict):
            raise SpecError(overlay_path, "the overlay is not a mapping")
        raw = merge_overlay(raw, overlay)
        validate_document(overlay_path, raw)
    return Spec(info, path, raw, profile)
