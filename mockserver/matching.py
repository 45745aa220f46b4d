"""Request predicates, shared by stubs (which calls a stub answers) and the verify API (which
recorded requests to count or find): protocol, operation, path parameters, query, headers, the
caller's identity, and JSON-pointer predicates on the body.

A predicate is written ``{equals: V}``, ``{contains: V}``, ``{matches: REGEX}`` or
``{present: true|false}``; a bare value means ``{equals: V}``. Path parameters, query parameters,
headers and the identity are text: a non-text ``equals`` compares with its JSON text (``5`` and
``"5"`` are equal there). Body predicates compare JSON values as they are.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

MISSING: Any = object()
"""What a pointer finds where the body has nothing (``present: false`` matches it)."""
OPERATORS = ("equals", "contains", "matches", "present")
MAX_REGEX = 1000
"""Longest ``matches`` pattern (a pattern is compiled once, at load)."""


class MatchError(ValueError):
    """A predicate that cannot be used; the message names where it is."""


@dataclass(frozen=True, slots=True)
class Test:
    """One predicate on one value."""

    operator: str
    expected: Any
    regex: re.Pattern[str] | None = None

    def holds(self, value: Any, text: bool = False) -> bool:
        if self.operator == "present":
            return (value is not MISSING and value is not None) == bool(self.expected)
        if value is MISSING or value is None:
            return self.operator == "equals" and self.expected is None and value is None
        if text:
            value = value if isinstance(value, str) else _text(value)
        if self.operator == "equals":
            expected = _text(self.expected) if text and not isinstance(self.expected, str) else self.expected
            return equal(value, expected)
        if self.operator == "contains":
            if isinstance(value, str):
                return isinstance(self.expected, str) and self.expected in value
            if isinstance(value, list):
                return any(equal(item, self.expected) for item in value)
            if isinstance(value, dict) and isinstance(self.expected, dict):
                return all(k in value and equal(value[k], v) for k, v in self.expected.items())
            return False
        assert self.regex is not None
        return isinstance(value, str) and self.regex.search(value) is not None

    def to_json(self) -> dict[str, Any]:
        return {self.operator: self.expected}


def equal(a: Any, b: Any) -> bool:
    """JSON equality: 1 and 1.0 are equal, true and 1 are not."""
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(equal(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(equal(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def _text(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def parse_test(where: str, raw: Any) -> Test:
    """``{equals|contains|matches|present: V}``, or a bare value meaning ``{equals: V}``."""
    if not isinstance(raw, Mapping):
        return Test("equals", raw)
    keys = [k for k in raw if k in OPERATORS]
    if len(keys) != 1 or len(raw) != 1:
        raise MatchError(f"{where}: give one of {', '.join(OPERATORS)} (or a bare value to compare), got {dict(raw)!r}")
    operator = keys[0]
    expected = raw[operator]
    if operator == "present" and not isinstance(expected, bool):
        raise MatchError(f"{where}.present: true or false")
    if operator == "matches":
        if not isinstance(expected, str) or len(expected) > MAX_REGEX:
            raise MatchError(f"{where}.matches: a regular expression of at most {MAX_REGEX} characters")
        try:
            return Test(operator, expected, re.compile(expected))
        except re.error as exc:
            raise MatchError(f"{where}.matches: not a regular expression: {exc}") from None
    return Test(operator, expected)


def parse_pointer(where: str, raw: Any) -> tuple[str, ...]:
    """An RFC 6901 JSON pointer (``""`` is the whole body, ``/messages/0/content`` a part of it)."""
    if not isinstance(raw, str) or (raw and not raw.startswith("/")):
        raise MatchError(f'{where}: a JSON pointer such as /messages/0/content (or "" for the whole body)')
    if not raw:
        return ()
    return tuple(part.replace("~1", "/").replace("~0", "~") for part in raw[1:].split("/"))


def resolve_pointer(document: Any, pointer: tuple[str, ...]) -> Any:
    node = document
    for part in pointer:
        if isinstance(node, dict):
            if part not in node:
                return MISSING
            node = node[part]
        elif isinstance(node, list):
            if not part.isdigit() or (len(part) > 1 and part.startswith("0")) or int(part) >= len(node):
                return MISSING
            node = node[int(part)]
        else:
            return MISSING
    return node


def pointer_text(pointer: tuple[str, ...]) -> str:
    return "".join("/" + p.replace("~", "~0").replace("/", "~1") for p in pointer)


@dataclass(slots=True)
class Seen:
    """A request as predicates see it: a live call's or a journal entry's (not frozen: one is made
    for every call an operation's stubs look at, and a frozen constructor costs three times as much)."""

    protocol: str
    operation: str | None
    path: Mapping[str, str]
    query: Mapping[str, str]
    headers: Mapping[str, str]
    """Any mapping whose lookups ignore case (aiohttp's headers), or one with lower-case names."""
    body: Any
    identity: str | None = None


@dataclass(frozen=True, slots=True)
class RequestMatcher:
    protocol: str | None = None
    operation: str | None = None
    path: Mapping[str, Test] = field(default_factory=dict)
    query: Mapping[str, Test] = field(default_factory=dict)
    headers: Mapping[str, Test] = field(default_factory=dict)
    """Lower-case names."""
    body: tuple[tuple[tuple[str, ...], Test], ...] = ()
    identity: Test | None = None

    def matches(self, seen: Seen) -> bool:
        if self.protocol is not None and seen.protocol != self.protocol:
            return False
        if self.operation is not None and seen.operation != self.operation:
            return False
        for name, test in self.path.items():
            if not test.holds(seen.path.get(name, MISSING), text=True):
                return False
        for name, test in self.query.items():
            if not test.holds(seen.query.get(name, MISSING), text=True):
                return False
        for name, test in self.headers.items():
            if not test.holds(_header(seen.headers, name), text=True):
                return False
        if self.identity is not None and not self.identity.holds(
            seen.identity if seen.identity is not None else MISSING, text=True
        ):
            return False
        return all(test.holds(resolve_pointer(seen.body, pointer)) for pointer, test in self.body)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.protocol is not None:
            out["protocol"] = self.protocol
        if self.operation is not None:
            out["operation"] = self.operation
        for part in ("path", "query", "headers"):
            tests: Mapping[str, Test] = getattr(self, part)
            if tests:
                out[part] = {name: test.to_json() for name, test in tests.items()}
        if self.body:
            out["body"] = [{"pointer": pointer_text(p), **t.to_json()} for p, t in self.body]
        if self.identity is not None:
            out["identity"] = self.identity.to_json()
        return out


def _header(headers: Mapping[str, str], name: str) -> Any:
    value = headers.get(name)
    if value is None and name not in headers:
        value = next((v for k, v in headers.items() if k.lower() == name), None)
    return MISSING if value is None else value


REQUEST_PARTS = ("protocol", "operation", "path", "query", "headers", "body", "identity")


def parse_matcher(where: str, raw: Any, operations: Mapping[str, Any]) -> RequestMatcher:
    """A matcher from its JSON form; ``operations`` maps each served protocol to its operations
    (and each operation to its path parameter names), to refuse names that match nothing."""
    if not isinstance(raw, Mapping):
        raise MatchError(f"{where}: a mapping of {', '.join(REQUEST_PARTS)}")
    unknown = sorted(set(raw) - set(REQUEST_PARTS))
    if unknown:
        raise MatchError(f"{where}: unknown field(s) {', '.join(map(str, unknown))}; known: {', '.join(REQUEST_PARTS)}")
    protocol = raw.get("protocol")
    if protocol is not None and protocol not in operations:
        raise MatchError(f"{where}.protocol: {protocol!r} is not served here; served: {', '.join(sorted(operations))}")
    operation = raw.get("operation")
    path_names: set[str] | None = None
    if operation is not None:
        owners = [p for p, ops in operations.items() if operation in ops and protocol in (None, p)]
        if not owners:
            scope = f"{protocol} has no" if protocol else "no served protocol has an"
            raise MatchError(f"{where}.operation: {scope} operation {operation!r}")
        path_names = {name for p in owners for name in operations[p][operation]}
    tests: dict[str, dict[str, Test]] = {}
    for part in ("path", "query", "headers"):
        given = raw.get(part) or {}
        if not isinstance(given, Mapping):
            raise MatchError(f"{where}.{part}: a mapping of names to predicates")
        tests[part] = {}
        for name, test in given.items():
            if part == "path" and path_names is not None and name not in path_names:
                known = ", ".join(sorted(path_names)) or "none"
                raise MatchError(f"{where}.path.{name}: {operation} has no path parameter {name!r} (it has {known})")
            key = str(name).lower() if part == "headers" else str(name)
            tests[part][key] = parse_test(f"{where}.{part}.{name}", test)
    body = []
    given_body = raw.get("body") or []
    if not isinstance(given_body, list):
        raise MatchError(f"{where}.body: a list of {{pointer: /a/b, equals|contains|matches|present: ...}}")
    for i, item in enumerate(given_body):
        at = f"{where}.body[{i}]"
        if not isinstance(item, Mapping) or "pointer" not in item:
            raise MatchError(f"{at}: a mapping with a pointer and one predicate")
        pointer = parse_pointer(f"{at}.pointer", item["pointer"])
        body.append((pointer, parse_test(at, {k: v for k, v in item.items() if k != "pointer"})))
    identity = parse_test(f"{where}.identity", raw["identity"]) if raw.get("identity") is not None else None
    return RequestMatcher(protocol, operation, tests["path"], tests["query"], tests["headers"], tuple(body), identity)


Key = tuple[str, Any]
"""What a stub can be looked up by: ("path" | "query" | "headers", name) or ("body", pointer)."""
MISSING_KEY = "\0missing"


def _canonical(value: Any, text: bool) -> str:
    """One string per value an ``equals`` test holds for: JSON text for text parts (``5`` and
    ``"5"`` alike), canonical JSON for bodies (1 and 1.0 alike, true apart from 1)."""
    if value is MISSING or (value is None and text):
        return MISSING_KEY
    if text:
        return value if isinstance(value, str) else _text(value)
    if isinstance(value, str):  # the common key, without an encoder call: JSON text never starts with \1
        return "\1" + value
    return json.dumps(_integral(value), sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _integral(value: Any) -> Any:
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {k: _integral(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_integral(v) for v in value]
    return value


def equality_keys(matcher: RequestMatcher) -> dict[Key, str]:
    """The exact values a matcher requires, by where they are: what a slot indexes it by."""
    keys: dict[Key, str] = {}
    for part in ("path", "query", "headers"):
        tests: Mapping[str, Test] = getattr(matcher, part)
        for name, test in tests.items():
            if test.operator == "equals" and test.expected is not None:
                keys[(part, name)] = _canonical(test.expected, text=True)
    for pointer, test in matcher.body:
        if test.operator == "equals":
            keys[("body", pointer)] = _canonical(test.expected, text=False)
    return keys


def _seen_value(seen: Seen, key: Key) -> str:
    part, name = key
    if part == "body":
        return _canonical(resolve_pointer(seen.body, name), text=False)
    if part == "headers":
        return _canonical(_header(seen.headers, name), text=True)
    found: Mapping[str, str] = seen.path if part == "path" else seen.query
    return _canonical(found.get(name, MISSING), text=True)


class Slot:
    """One operation's stubs, in order, indexed by the exact value most of them require, so that a
    call looks at the few that could take it: stubs that match nothing cost a lookup, not a scan.

    ``stubs`` is what an endpoint tests (empty: nothing to do); ``candidates`` gives, in order, the
    stubs whose indexed value is the call's plus those that index nothing."""

    __slots__ = ("by_value", "key", "reads_body", "rest", "stubs")

    def __init__(self) -> None:
        self.stubs: list[Any] = []
        self.key: Key | None = None
        self.by_value: dict[str, list[Any]] = {}
        self.rest: list[Any] = []
        self.reads_body = False

    def fill(self, stubs: list[Any]) -> None:
        """``stubs``: objects with a ``matcher`` (a RequestMatcher), in the order they take calls."""
        keys = [equality_keys(stub.matcher) for stub in stubs]
        counts: dict[Key, int] = {}
        for found in keys:
            for key in found:
                counts[key] = counts.get(key, 0) + 1
        self.key = max(counts, key=lambda k: counts[k]) if counts else None
        indexed: dict[str, list[tuple[int, Any]]] = {}
        rest: list[tuple[int, Any]] = []
        for position, (stub, found) in enumerate(zip(stubs, keys, strict=True)):
            value = found.get(self.key) if self.key is not None else None
            (indexed.setdefault(value, []) if value is not None else rest).append((position, stub))
        # each value's stubs merged with those that index nothing, once, here: a call merges nothing
        self.by_value = {value: [s for _, s in sorted([*group, *rest], key=_first)] for value, group in indexed.items()}
        self.rest = [stub for _, stub in rest]
        self.reads_body = any(stub.matcher.body for stub in stubs)
        self.stubs = list(stubs)

    def candidates(self, seen: Seen) -> list[Any]:
        if self.key is None:
            return self.stubs
        return self.by_value.get(_seen_value(seen, self.key), self.rest)


def _first(item: tuple[int, Any]) -> int:
    return item[0]
