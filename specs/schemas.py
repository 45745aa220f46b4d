"""Compile a document's schemas into fast JSON Schema validators (jsonschema-rs), once.

Used on both sides: the mock validates every request body in its hot path, the suite validates
each streamed frame as it arrives. openapi-core is kept for whole request/response validation,
where its per-call cost does not matter.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import jsonschema_rs


@dataclass(frozen=True, slots=True)
class SchemaViolation:
    path: str
    """JSON pointer-ish location of the offending value, e.g. ``/steps/0/name``."""
    message: str

    def __str__(self) -> str:
        return f"{self.path or '/'}: {self.message}"


def _upgrade_30(node: Any) -> Any:
    """OpenAPI 3.0 schema dialect -> JSON Schema: ``nullable: true`` becomes a null type."""
    if isinstance(node, list):
        return [_upgrade_30(item) for item in node]
    if not isinstance(node, dict):
        return node
    out = {key: _upgrade_30(value) for key, value in node.items()}
    # only the keyword (a boolean) is consumed: a property *named* "nullable" is a schema and stays
    nullable = isinstance(out.get("nullable"), bool) and out.pop("nullable") is True
    if nullable:
        kind = out.get("type")
        if isinstance(kind, str):
            out["type"] = [kind, "null"]
        if isinstance(out.get("enum"), list) and None not in out["enum"]:
            out["enum"] = [*out["enum"], None]
        if "$ref" in out or "allOf" in out or "oneOf" in out or "anyOf" in out:
            out = {"anyOf": [out, {"type": "null"}]}
    return out


_INTEGER_FORMATS = {"int32": 2**31, "int64": 2**63}


def _bound_integer_formats(node: Any) -> Any:
    """``format: int32``/``int64`` as the bounds they name: jsonschema leaves formats unchecked, while
    schemathesis generates values past them as invalid data, which a server must reject."""
    if isinstance(node, list):
        return [_bound_integer_formats(item) for item in node]
    if not isinstance(node, dict):
        return node
    out = {key: _bound_integer_formats(value) for key, value in node.items()}
    fmt = out.get("format")
    half = _INTEGER_FORMATS.get(fmt) if isinstance(fmt, str) and out.get("type") == "integer" else None
    if half is not None:
        out.setdefault("minimum", -half)
        out.setdefault("maximum", half - 1)
    return out


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


_JSON = json.JSONDecoder(parse_constant=_reject_constant)


def _asserting_content(components: Mapping[str, Any]) -> type:
    """The ``contentMediaType`` keyword as an assertion for JSON content: a string that must parse
    as JSON and hold ``contentSchema`` (2020-12 leaves both annotations; an OpenAPI 3.2 event
    stream's item schema says an event's ``data`` is JSON this way, and a validator of its events
    asserts it, as schemathesis does). Other media types stay annotations."""

    class ContentMediaType:
        def __init__(self, parent: Mapping[str, Any], value: str, _path: list[str | int]) -> None:
            self.media = value
            self.json = value.split(";")[0].strip().lower().endswith(("/json", "+json"))
            content = parent.get("contentSchema")
            self.schema = (
                jsonschema_rs.Draft202012Validator(
                    {**content, "components": components}, keywords={"contentMediaType": ContentMediaType}
                )
                if self.json and isinstance(content, dict)
                else None
            )

        def validate(self, instance: Any) -> None:
            if not self.json or not isinstance(instance, str):
                return
            try:
                value = _JSON.decode(instance)
            except ValueError as exc:
                raise ValueError(f"is not {self.media} ({exc})") from None
            if self.schema is not None:
                for error in self.schema.iter_errors(value):
                    path = "".join(f"/{part}" for part in error.instance_path)
                    raise ValueError(f"its {self.media} content {path or '/'}: {error.message}")

    return ContentMediaType


class SchemaSet:
    """Validators for one document; ``validator(schema)`` compiles once per distinct schema object."""

    def __init__(self, document: Mapping[str, Any]) -> None:
        self._legacy = str(document.get("openapi", "")).startswith("3.0.")
        components = copy.deepcopy(dict(document.get("components", {})))
        self._components = _bound_integer_formats(_upgrade_30(components) if self._legacy else components)
        self._cache: dict[tuple[int, bool], tuple[Any, Any]] = {}
        self._refs: dict[tuple[str, bool], Any] = {}

    MAX_CACHED = 4096
    """Distinct schema objects kept compiled; beyond it the cache starts over (bounded memory)."""

    def validator(self, schema: Mapping[str, Any], content: bool = False) -> Any:
        """``content``: JSON content (``contentMediaType``, ``contentSchema``) is asserted too."""
        ref = schema.get("$ref") if len(schema) == 1 else None
        if isinstance(ref, str):  # ``{"$ref": ...}`` built on the fly: cache by target, not identity
            hit = self._refs.get((ref, content))
            if hit is None:
                hit = self._refs[ref, content] = self._compile(schema, content)
            return hit
        key = (id(schema), content)
        cached = self._cache.get(key)
        if cached is not None and cached[0] is schema:
            return cached[1]
        compiled = self._compile(schema, content)
        if len(self._cache) >= self.MAX_CACHED:
            self._cache.clear()
        self._cache[key] = (schema, compiled)  # keep the schema alive so its id stays unique
        return compiled

    def _compile(self, schema: Mapping[str, Any], content: bool = False) -> Any:
        body = _bound_integer_formats(_upgrade_30(dict(schema)) if self._legacy else dict(schema))
        root = {**body, "components": self._components}
        if self._legacy:
            return jsonschema_rs.Draft4Validator(root)
        if content:
            keywords = {"contentMediaType": _asserting_content(self._components)}
            return jsonschema_rs.Draft202012Validator(root, keywords=keywords)
        return jsonschema_rs.Draft202012Validator(root)

    def component(self, name: str) -> Any:
        return self.validator({"$ref": f"#/components/schemas/{name}"})

    def violations(
        self, schema: Mapping[str, Any], instance: Any, limit: int = 5, content: bool = False
    ) -> list[SchemaViolation]:
        found: list[SchemaViolation] = []
        for error in self.validator(schema, content).iter_errors(instance):
            path = "".join(f"/{part}" for part in error.instance_path)
            found.append(SchemaViolation(path, error.message))
            if len(found) >= limit:
                break
        return found
