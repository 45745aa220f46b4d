"""Targeted cases: the invalid requests the property-based phase finds only when its draws reach them.

A generated case finds a server that accepts ``{"chat_context": {"chat_histories": [-101311]}}``
(an item of the wrong type three levels down) only when the draws build that shape: on a real
neuro-san server about 15 of 579 cases did, and an unrelated change of the draws lost it. The
cases here are derived from the document, the same every run: for each operation with a JSON body
whose path parameters are known, one body per property (to a bounded depth, array items included)
with that property given a value of a type the document does not allow, and one body that is not
UTF-8. Each is sent once; a 2xx fails ``negative_data_rejection`` (the server accepted what the
document forbids), a 5xx fails ``not_a_server_error``, a 4xx passes both. A 404 reached no
operation and counts for nothing.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from specs.documents import Operation, Spec, resolve_ref
from specs.schemas import SchemaSet

MAX_DEPTH = 4
"""Levels of properties and array items a type violation is placed at."""
MAX_CASES = 40
"""Targeted cases per operation, shallow properties first: a server that accepts invalid bodies
runs each (on a real agent, a chat each), so the count is bounded."""
NOT_UTF8 = b'{"conformance": "\xff\xfe not UTF-8 \xc3"}'

_WRONG: tuple[tuple[str, Any], ...] = (
    ("object", {"conformance": "a value of another type"}),
    ("integer", 7),
    ("array", [7]),
    ("string", "conformance: a value of another type"),
    ("boolean", True),
)
"""Values of each JSON type, the ones a lax parser cannot coerce first (an object is never read as
a string or a number, a number never as an object)."""
_TYPE_OF = {"object": ("object",), "integer": ("integer", "number"), "array": ("array",), "string": ("string",)}


@dataclass(frozen=True, slots=True)
class Targeted:
    operation: str
    """The operation's label, ``POST /api/v1/{agent_name}/streaming_chat``."""
    method: str
    path: str
    """The path with its parameters filled, quoted as one segment each."""
    what: str
    """What is wrong with the request, for the verdict."""
    body: bytes | None
    negative: bool = True
    """The document forbids the request (a 2xx fails negative_data_rejection); else it is valid and
    names a resource that does not exist, so only a 5xx is judged (what it answers instead is the
    protocol's error requirements' subject)."""


def cases(spec: Spec, schemas: SchemaSet, known: Mapping[str, tuple[str, ...]]) -> Iterator[Targeted]:
    yield from unknown_ids(spec, schemas)
    for op in spec.operations():
        path = _filled(op, spec, known)
        content = (spec.resolve(op.definition.get("requestBody") or {}).get("content")) or {}
        media = next((m for m in content if m.split(";")[0].strip() == "application/json"), None)
        if path is None or media is None or not isinstance(content[media].get("schema"), Mapping):
            continue
        schema = content[media]["schema"]
        yield Targeted(op.label, op.method.upper(), path, "a body that is not UTF-8", NOT_UTF8)
        base = _valid_base(content[media], schema, spec, schemas)
        if base is None:
            continue
        made = 0
        for where, value, allowed in _violations(spec.raw, schema):
            body = _placed(base, where, value)
            if body is None or not schemas.violations(schema, body):
                continue  # the place does not exist in the base, or the document allows the value after all
            what = f"{_dotted(where)} as {json.dumps(value)}, where the document wants {' or '.join(allowed)}"
            yield Targeted(op.label, op.method.upper(), path, what, json.dumps(body).encode())
            made += 1
            if made >= MAX_CASES:
                break


def unknown_ids(spec: Spec, schemas: SchemaSet) -> Iterator[Targeted]:
    """Each operation whose path names a resource, once with every id one that names nothing: a
    crash there (a lookup that raises instead of answering 404) is found whatever the draws."""
    for op in spec.operations():
        path = op.path
        names = [path[i + 1 : path.index("}", i)] for i, c in enumerate(path) if c == "{"]
        if not names:
            continue
        for name in names:
            path = path.replace("{" + name + "}", quote(f"{UNKNOWN}-{name}", safe=""))
        content = (spec.resolve(op.definition.get("requestBody") or {}).get("content")) or {}
        media = next((m for m in content if m.split(";")[0].strip() == "application/json"), None)
        body = None
        if media is not None and isinstance(content[media].get("schema"), Mapping):
            base = _valid_base(content[media], content[media]["schema"], spec, schemas)
            if base is None:
                continue  # no valid body to send: the answer would be about the body
            body = json.dumps(base).encode()
        elif content:
            continue  # a multipart or other body this stage does not build
        yield Targeted(op.label, op.method.upper(), path, f"{', '.join(names)} naming nothing", body, negative=False)


UNKNOWN = "conformance-no-such"
"""The prefix of an id that names nothing on any server."""


def _filled(op: Operation, spec: Spec, known: Mapping[str, tuple[str, ...]]) -> str | None:
    """The operation's path with every parameter a known value (the discovered agent), or None:
    a case under an unknown id would reach only a 404."""
    path = op.path
    while "{" in path:
        name = path[path.index("{") + 1 : path.index("}")]
        if not known.get(name):
            return None
        path = path.replace("{" + name + "}", quote(known[name][0], safe=""))
    return path


def _valid_base(media: Mapping[str, Any], schema: Any, spec: Spec, schemas: SchemaSet) -> Any:
    """A body the document accepts to put each violation in: its first example, else ``{}``."""
    examples = [spec.resolve(e).get("value") for e in (media.get("examples") or {}).values()]
    resolved = spec.resolve(schema)
    candidates = [media.get("example"), *examples, *(resolved.get("examples") or []), resolved.get("example"), {}]
    return next(
        (copy.deepcopy(c) for c in candidates if isinstance(c, dict) and not schemas.violations(schema, c)), None
    )


def _violations(document: Mapping[str, Any], schema: Any) -> Iterator[tuple[tuple[str | int, ...], Any, list[str]]]:
    """(where, a value of another type, the types the document allows there), shallow places first."""
    level: list[tuple[tuple[str | int, ...], Any]] = [((), schema)]
    for _ in range(MAX_DEPTH):
        deeper: list[tuple[tuple[str | int, ...], Any]] = []
        for where, node in level:
            node = resolve_ref(document, node)
            for part in (
                [node, *(resolve_ref(document, s) for s in node.get("allOf") or ())]
                if isinstance(node, Mapping)
                else []
            ):
                if not isinstance(part, Mapping):
                    continue
                for name, sub in (part.get("properties") or {}).items():
                    deeper.append(((*where, name), sub))
                if isinstance(part.get("items"), Mapping):
                    deeper.append(((*where, 0), part["items"]))
        for where, node in deeper:
            wrong = _wrong_value(resolve_ref(document, node))
            if wrong is not None:
                yield (where, *wrong)
        level = deeper


def _wrong_value(node: Any) -> tuple[Any, list[str]] | None:
    """A value of a JSON type the node does not allow, and the types it allows; None when it allows
    any type (no ``type``, or combinators this walk does not follow)."""
    if not isinstance(node, Mapping) or any(k in node for k in ("oneOf", "anyOf", "not")):
        return None
    kinds = node.get("type")
    allowed = [kinds] if isinstance(kinds, str) else list(kinds) if isinstance(kinds, list) else []
    if not allowed:
        return None
    named = {t for a in allowed for t in _TYPE_OF.get(a, (a,))} | ({"integer"} if "number" in allowed else set())
    for kind, value in _WRONG:
        if kind not in named:
            return value, [a for a in allowed if a != "null"] + (["null"] if "null" in allowed else [])
    return None


def _placed(base: Any, where: tuple[str | int, ...], value: Any) -> Any:
    """``base`` with ``value`` at ``where``, making the objects and the one-item arrays on the way;
    None when the base holds something else on the way (another type the walk cannot enter)."""
    body = copy.deepcopy(base)
    node = body
    for step, following in zip(where, [*where[1:], None], strict=True):
        last = following is None
        if isinstance(step, str):
            if not isinstance(node, dict):
                return None
            if last:
                node[step] = value
            else:
                node = node.setdefault(step, [] if isinstance(following, int) else {})
        else:
            if not isinstance(node, list):
                return None
            if last:
                node[:1] = [value]
            else:
                if not node:
                    node.append([] if isinstance(following, int) else {})
                node = node[0]
    return body


def _dotted(where: tuple[str | int, ...]) -> str:
    return "".join(f"[{p}]" if isinstance(p, int) else (f".{p}" if n else p) for n, p in enumerate(where))
