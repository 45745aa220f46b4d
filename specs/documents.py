"""The protocols and their documents: each protocol is discovered from its manifest, and both
halves of the kit load documents through here, so a document is parsed and validated once per
process and a malformed one fails with a message naming the file and the problem.

A protocol is a folder ``specs/<id>/`` holding its document and ``protocol.yaml`` (its id, server
path, profiles, error shape, auth, streaming operations, and the modules of its suite and mock
sides). The kit's own are found in the specs folder; a separate package adds one through the
entry-point group ``agent_conformance.protocols``, whose entries load to a module (or package)
that has a ``protocol.yaml`` beside it. No table lists the protocols.
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache, cached_property
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

import yaml

_SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
"""libyaml's safe loader when PyYAML was built with it: the same values, about 8x faster on the
documents (0.3 s of CPU per run of all four protocols)."""


def _yaml(text: str) -> Any:
    return yaml.load(text, Loader=_SAFE_LOADER)


HTTP_METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace", "query")


class SpecError(Exception):
    """A protocol document could not be loaded; the message names the file and the problem."""

    def __init__(self, path: Path | str, problem: str) -> None:
        self.path = str(path)
        self.problem = problem
        super().__init__(f"{path}: {problem}")


MANIFEST = "protocol.yaml"
ENTRY_POINT_GROUP = "agent_conformance.protocols"


@dataclass(frozen=True, slots=True)
class ErrorShape:
    """How a protocol's error bodies look (the manifest's ``error``), so that every rejection, the
    mock's and the proxy's alike, speaks the protocol's own shape."""

    body: Mapping[str, Any]
    """The body, with ``$message`` and ``$code`` standing for the message and the status's code."""
    details: str | None = None
    """Key under which validation details go, when there are some (it may be the message's key)."""
    details_status: int | None = None
    """Only errors of this status carry details."""
    detail_type: str | None = None
    """An ``@type`` each detail is tagged with."""
    codes: Mapping[int, int] = field(default_factory=dict)
    """The status's code in the protocol's own numbering (``$code``)."""
    default_code: int = 0
    invalid_body_status: int = 400
    """The status of a malformed request body."""

    def render(self, status: int, message: str, details: Sequence[Mapping[str, Any]] = ()) -> dict[str, Any]:
        values = {"$message": message, "$code": self.codes.get(status, self.default_code)}
        body = {key: values.get(value, value) if isinstance(value, str) else value for key, value in self.body.items()}
        if details and self.details and self.details_status in (None, status):
            tagged = [{"@type": self.detail_type, **d} for d in details] if self.detail_type else list(details)
            body[self.details] = tagged
        return body


@dataclass(frozen=True, slots=True)
class ProtocolInfo:
    id: str
    title: str
    document: str
    """Path of the document, relative to ``root``."""
    prefix: str
    """Requirement-id prefix, e.g. ``AP`` in ``AP-TASK-001``."""
    base_path: str = ""
    """What a server root needs appended so that the document's paths resolve under it."""
    profiles: Mapping[str, str] = field(default_factory=dict)
    """Named overlays (paths relative to ``root``) merged into the document on request."""
    suite: str = ""
    """The package of its suite side (``requirements``, and optionally ``model`` and ``passive``)."""
    mock: str = ""
    """The package of its mock side (``mount`` and ``FAULTS``), if it has a reference mock."""
    streaming_operations: tuple[str, ...] = ()
    """Operations whose answers are streams, validated frame by frame by scenario checks."""
    stream_end: str | None = None
    """The data of the event that ends its event streams (OpenAI's ``[DONE]``), after which a client
    stops reading: a stream that sent it and then idles has ended, in every phase; None for a
    protocol whose streams end only when the server closes them."""
    realm: str | None = None
    """The realm of the bearer challenge a 401 carries, where the document asks for auth."""
    error: ErrorShape = field(default_factory=lambda: ErrorShape({"message": "$message"}))
    stream_error: Mapping[str, Any] | None = None
    """The in-band error frame its streamed answers carry (``$message`` filled in), for a protocol
    that streams; None for one that does not (chaos's stream effects then do not apply)."""
    paging: Mapping[str, str] = field(default_factory=dict)
    """How its lists page when they page by a token (the manifest's ``paging``): ``items``, the
    answer's list member, and ``token``, the member an answer hands out and the next request sends
    back; empty for a protocol that pages otherwise or not at all."""
    root: Path | None = None
    """The folder ``document`` is relative to; None for the kit's own (the specs folder)."""

    @property
    def folder(self) -> Path:
        return self.root if self.root is not None else specs_root()

    def stream_error_frame(self, message: str) -> dict[str, Any]:
        """Its in-band error frame saying ``message`` (KeyError for a protocol that streams nothing)."""
        if self.stream_error is None:
            raise KeyError(f"{self.id} declares no stream_error: its answers are not streamed")
        frame: dict[str, Any] = _filled(self.stream_error, {"$message": message})
        return frame


def _filled(template: Any, values: Mapping[str, Any]) -> Any:
    """A copy of a manifest template with its ``$name`` values replaced, at any depth."""
    if isinstance(template, Mapping):
        return {key: _filled(value, values) for key, value in template.items()}
    if isinstance(template, list):
        return [_filled(value, values) for value in template]
    return values.get(template, template) if isinstance(template, str) else template


def read_manifest(path: Path, root: Path | None = None) -> ProtocolInfo:
    """A ``protocol.yaml``; ``root`` None means it lives in the kit's own specs folder."""
    try:
        raw = _yaml(path.read_text(encoding="utf-8"))
        folder = path.parent.name
        error = dict(raw.get("error") or {})
        auth = raw.get("auth") or {}
        return ProtocolInfo(
            id=str(raw["id"]),
            title=str(raw["title"]),
            document=f"{folder}/{raw['document']}",
            prefix=str(raw["prefix"]),
            base_path=str(raw.get("server_path") or ""),
            profiles={name: f"{folder}/{file}" for name, file in (raw.get("profiles") or {}).items()},
            suite=str(raw.get("suite") or ""),
            mock=str(raw.get("mock") or ""),
            streaming_operations=tuple(raw.get("streaming_operations") or ()),
            stream_end=str(raw["stream_end"]) if raw.get("stream_end") is not None else None,
            realm=auth.get("realm"),
            stream_error=dict(raw["stream_error"]) if raw.get("stream_error") is not None else None,
            error=ErrorShape(
                body=dict(error.get("body") or {"message": "$message"}),
                details=error.get("details"),
                details_status=error.get("details_status"),
                detail_type=error.get("detail_type"),
                codes={int(k): int(v) for k, v in (error.get("codes") or {}).items()},
                default_code=int(error.get("default_code", 0)),
                invalid_body_status=int(error.get("invalid_body_status", 400)),
            ),
            paging={str(k): str(v) for k, v in (raw.get("paging") or {}).items()},
            root=root,
        )
    except (OSError, UnicodeDecodeError, yaml.YAMLError, AttributeError, KeyError, TypeError, ValueError) as exc:
        raise SpecError(path, f"not a valid protocol manifest: {exc!r}") from exc


def discover() -> dict[str, ProtocolInfo]:
    """The kit's own protocols (a manifest in each folder of the specs folder), then those that
    installed packages add through the entry-point group."""
    found = [read_manifest(m) for m in sorted(specs_root().glob(f"*/{MANIFEST}"))]
    for entry in entry_points(group=ENTRY_POINT_GROUP):
        module = entry.load()
        manifest = Path(module.__file__).resolve().parent / MANIFEST
        found.append(read_manifest(manifest, root=manifest.parent.parent))
    protocols: dict[str, ProtocolInfo] = {}
    for info in found:
        if info.id in protocols:
            raise SpecError(info.folder / info.document, f"protocol {info.id!r} is defined twice")
        protocols[info.id] = info
    return protocols


def specs_root() -> Path:
    """The specs folder: this package's own, in a checkout and in a wheel alike."""
    return Path(__file__).resolve().parent


PROTOCOLS: dict[str, ProtocolInfo] = discover()


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

    def response(self, operation: Operation | str, status: int) -> Mapping[str, Any] | None:
        """The document's answer to ``operation`` for ``status`` (its own code, then its class,
        ``4XX`` or the ``4xx`` some documents write, then ``default``), resolved; None when the
        document has none. The one lookup the run's checks, the proxy's document judge, the
        protocols' passive judges, replay and the mock's stubs read answers by."""
        op = self.operation(operation) if isinstance(operation, str) else operation
        responses = op.definition.get("responses", {})
        for key in (str(status), f"{status // 100}XX", f"{status // 100}xx", "default"):
            if key in responses:
                return self.resolve(responses[key])  # type: ignore[no-any-return]
        return None

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
        raw = json.loads(text) if path.suffix == ".json" else _yaml(text)
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
    marker = _validated_marker(raw)
    if marker is not None and marker.exists():
        return
    from openapi_spec_validator import validate
    from openapi_spec_validator.validation.exceptions import OpenAPIValidationError

    try:
        validate(raw)
    except OpenAPIValidationError as exc:
        where = "/".join(str(p) for p in getattr(exc, "path", ()) or ())
        raise SpecError(path, f"not a valid OpenAPI {version} document at '{where}': {exc.message}") from exc
    except Exception as exc:  # the validator surfaces reference-resolution errors as their own types
        raise SpecError(path, f"not a valid OpenAPI {version} document: {exc}") from exc
    if marker is not None:
        try:
            marker.parent.mkdir(parents=True, exist_ok=True)
            marker.touch()
        except OSError:
            pass  # a read-only cache folder: validated again next time


def _validated_marker(raw: dict[str, Any]) -> Path | None:
    """The cache file that says this exact document passed this version of openapi-spec-validator.

    Validating costs about 1.2 s of CPU per process (its import, then 0.1-0.2 s per document), paid
    by every run, mock and test worker although the installed documents rarely change; a document
    whose content or validator differs has another name, so the guard still holds for it. None when
    the validator's version cannot be read (then it always runs)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        validator = version("openapi-spec-validator")
    except PackageNotFoundError:
        return None
    canonical = json.dumps(raw, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    key = hashlib.sha256(f"{validator}\n{canonical}".encode()).hexdigest()
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / "agent-conformance" / "validated-documents" / key


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
    path = info.folder / info.document
    raw = read_document(path)
    if profile is not None:
        if profile not in info.profiles:
            raise SpecError(path, f"protocol {protocol_id!r} has no profile {profile!r}")
        overlay_path = info.folder / info.profiles[profile]
        try:
            overlay = _yaml(overlay_path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
            raise SpecError(overlay_path, f"cannot read the overlay: {exc}") from exc
        if not isinstance(overlay, dict):
            raise SpecError(overlay_path, "the overlay is not a mapping")
        raw = merge_overlay(raw, overlay)
        validate_document(overlay_path, raw)
    return Spec(info, path, raw, profile)
