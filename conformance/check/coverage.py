"""What a run exercised of the document, counted from the exchanges it made: no request of its own.

Every client of a run (the property-based phase's transport, the check kit's ``Client``: the
scenarios and the model-based phase) tells the run's ``Tap`` each exchange it made: the method,
the URL, the status it got (None: no answer), the request body it sent and the answer's body. The
phase or check sending it is the tap's ``owner`` (the requirements it decides). ``Tap.report``
then lays the counts over the document: per operation, each documented status, parameter, request
body property and response body property, whether the run exercised it, through which
requirements and how many times.

What counts, plainly: an operation is exercised when a request to it was sent; a status when an
answer with it came back (``validated``: of those, the ones the property-based phase received, which
checks each answer against the document); a parameter when a request carried it (a path parameter
with every request); a request or response property when a JSON body sent or received held it at
its top level (or, for an array, in its items). A streamed answer's events are not read here.
"""

from __future__ import annotations

import json
import threading
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from specs.documents import Operation, Spec

BODY_LIMIT = 256 * 1024
"""Bodies larger than this are not parsed for their properties (counting stays cheap)."""
SCHEMA_PHASE = "schema"
"""The owner whose answers count as validated (the property-based phase checks every answer)."""


@dataclass
class _Seen:
    """What one (method, route) got."""

    sent: Counter[tuple[str, ...]] = field(default_factory=Counter)
    statuses: dict[str, Counter[tuple[str, ...]]] = field(default_factory=lambda: defaultdict(Counter))
    validated: Counter[str] = field(default_factory=Counter)
    query: Counter[str] = field(default_factory=Counter)
    headers: Counter[str] = field(default_factory=Counter)
    request_keys: Counter[str] = field(default_factory=Counter)
    response_keys: dict[str, Counter[str]] = field(default_factory=lambda: defaultdict(Counter))


class Tap:
    """The run's record of what it sent and got, by document route (thread-safe: the property-based
    phase sends from worker threads)."""

    def __init__(self, route_of: Callable[[str], str]) -> None:
        self.route_of = route_of
        self.owner: tuple[str, ...] = ()
        """The requirements the exchanges now being made decide (set by the runner and the scenario phase)."""
        self.phase = ""
        self._seen: dict[tuple[str, str], _Seen] = defaultdict(_Seen)
        self._lock = threading.Lock()

    def saw(
        self,
        method: str,
        url: str,
        status: int | None,
        headers: Iterable[str] = (),
        sent: object = None,
        answer: object = None,
    ) -> None:
        """One exchange sent: ``status`` None when no answer came; ``answer`` its body when read whole."""
        route = self.route_of(url)
        query = {k for k, _ in parse_qsl(urlsplit(url).query, keep_blank_values=True)}
        request_keys = _keys(sent)
        owner, phase = self.owner, self.phase
        with self._lock:
            seen = self._seen[method.upper(), route]
            seen.sent[owner] += 1
            seen.query.update(query)
            seen.headers.update({h.lower() for h in headers})
            seen.request_keys.update(request_keys)
            if status is not None:
                code = str(status)
                seen.statuses[code][owner] += 1
                if phase == SCHEMA_PHASE:
                    seen.validated[code] += 1
        if answer is not None and status is not None:
            self.answered(method, url, status, answer)

    def answered(self, method: str, url: str, status: int, answer: object) -> None:
        """The body of an answer ``saw`` counted, read whole."""
        response_keys = _keys(answer)
        if not response_keys:
            return
        route = self.route_of(url)
        with self._lock:
            self._seen[method.upper(), route].response_keys[str(status)].update(response_keys)

    def report(self, spec: Spec) -> dict[str, Any]:
        """The document's items, each with what the run did with it (``coverage`` of results.json)."""
        with self._lock:
            seen = dict(self._seen)
        operations = [_operation(spec, op, seen.get((op.method.upper(), op.path), _Seen())) for op in spec.operations()]
        return {"totals": _totals(operations), "operations": operations}


def _keys(body: object) -> list[str]:
    """The top-level property names of a JSON object body (of its items, for an array)."""
    if not isinstance(body, bytes | str) or not body or len(body) > BODY_LIMIT:
        return []
    text = body.decode("utf-8", "replace") if isinstance(body, bytes) else body
    if text.lstrip()[:1] not in ("{", "["):
        return []
    try:
        data = json.loads(text)
    except ValueError:
        return []
    items = data if isinstance(data, list) else [data]
    return sorted({k for item in items if isinstance(item, dict) for k in item})


def _by(counts: Mapping[tuple[str, ...], int]) -> dict[str, int]:
    """Exchanges per requirement, from counts per owner."""
    out: Counter[str] = Counter()
    for owner, n in counts.items():
        for rid in owner:
            out[rid] += n
    return dict(sorted(out.items()))


def _operation(spec: Spec, op: Operation, seen: _Seen) -> dict[str, Any]:
    requests = sum(seen.sent.values())
    documented = [str(code) for code in (op.definition.get("responses") or {})]
    statuses = []
    for code in [*documented, *sorted(c for c in seen.statuses if c not in documented)]:
        got, validated = seen.statuses.get(code, Counter()), seen.validated.get(code, 0)
        if code == "default":  # every status the document does not list falls under it
            got = sum((v for c, v in seen.statuses.items() if c not in documented), Counter())
            validated = sum(n for c, n in seen.validated.items() if c not in documented)
        statuses.append(
            {
                "status": code,
                "documented": code in documented,
                "seen": sum(got.values()),
                "validated": validated,
                "requirements": _by(got),
            }
        )
    parameters = []
    for param in _parameters(spec, op):
        where, name = str(param.get("in")), str(param.get("name"))
        sent = requests if where == "path" else seen.query[name] if where == "query" else seen.headers[name.lower()]
        parameters.append({"name": name, "in": where, "required": bool(param.get("required")), "sent": sent})
    request_properties = [
        {"name": name, "sent": seen.request_keys[name]} for name in _properties(spec, op.definition.get("requestBody"))
    ]
    response_properties = [
        {"status": code, "name": name, "seen": seen.response_keys.get(code, Counter())[name]}
        for code, answer in (op.definition.get("responses") or {}).items()
        for name in _properties(spec, answer)
    ]
    return {
        "operation": op.label,
        "operation_id": op.operation_id,
        "exercised": requests > 0,
        "requests": requests,
        "requirements": _by(seen.sent),
        "statuses": statuses,
        "parameters": parameters,
        "request_properties": request_properties,
        "response_properties": response_properties,
    }


def _parameters(spec: Spec, op: Operation) -> list[Mapping[str, Any]]:
    """The operation's parameters with its path's, resolved (the operation's win by name and place)."""
    shared = (spec.raw.get("paths") or {}).get(op.path, {}).get("parameters") or []
    found: dict[tuple[str, str], Mapping[str, Any]] = {}
    for param in [*shared, *(op.definition.get("parameters") or [])]:
        resolved = spec.resolve(param)
        if isinstance(resolved, Mapping):
            found[str(resolved.get("in")), str(resolved.get("name"))] = resolved
    return list(found.values())


def _properties(spec: Spec, node: Any) -> list[str]:
    """The top-level properties a request body or response declares for JSON (its items', for an array)."""
    node = spec.resolve(node)
    if not isinstance(node, Mapping):
        return []
    names: dict[str, None] = {}
    for media, content in (node.get("content") or {}).items():
        if "json" in media and isinstance(content, Mapping):
            for name in _schema_properties(spec, content.get("schema"), 0):
                names[name] = None
    return list(names)


def _schema_properties(spec: Spec, schema: Any, depth: int) -> Iterator[str]:
    schema = spec.resolve(schema)
    if not isinstance(schema, Mapping) or depth > 8:
        return
    yield from (schema.get("properties") or {})
    if schema.get("type") == "array" and depth == 0:
        yield from _schema_properties(spec, schema.get("items"), depth + 1)
    for combined in ("allOf", "anyOf", "oneOf"):
        for part in schema.get(combined) or []:
            yield from _schema_properties(spec, part, depth + 1)


def combined(parts: list[Mapping[str, Any]]) -> dict[str, Any]:
    """The coverage of several shares of one campaign (``conformance merge``): counts summed by
    operation and item, the totals counted again."""
    merged: dict[str, dict[str, Any]] = {}
    for part in parts:
        for op in part.get("operations") or []:
            into = merged.setdefault(op["operation"], {**op, "requests": 0, "requirements": {}, "statuses": []})
            into["requests"] += op["requests"]
            into["exercised"] = into["requests"] > 0
            _add(into["requirements"], op["requirements"])
            statuses = {s["status"]: s for s in into["statuses"]}
            for s in op["statuses"]:
                have = statuses.setdefault(s["status"], {**s, "seen": 0, "validated": 0, "requirements": {}})
                have["seen"] += s["seen"]
                have["validated"] += s["validated"]
                _add(have["requirements"], s["requirements"])
            into["statuses"] = list(statuses.values())
            for key, count in (("parameters", "sent"), ("request_properties", "sent"), ("response_properties", "seen")):
                if into[key] is op[key]:
                    into[key] = [{**item, count: 0} for item in op[key]]
                for have, item in zip(into[key], op[key], strict=True):
                    have[count] += item[count]
    operations = list(merged.values())
    return {"totals": _totals(operations), "operations": operations} if operations else {}


def _totals(operations: list[dict[str, Any]]) -> dict[str, dict[str, int]]:
    """Per kind of item, how many the document has and how many the run exercised."""
    totals: dict[str, dict[str, int]] = {}
    for kind, flags in (
        ("operations", [o["requests"] > 0 for o in operations]),
        ("statuses", [s["seen"] > 0 for o in operations for s in o["statuses"] if s["documented"]]),
        ("parameters", [p["sent"] > 0 for o in operations for p in o["parameters"]]),
        ("request_properties", [p["sent"] > 0 for o in operations for p in o["request_properties"]]),
        ("response_properties", [p["seen"] > 0 for o in operations for p in o["response_properties"]]),
    ):
        totals[kind] = {"exercised": sum(flags), "documented": len(flags)}
    return totals


def _add(into: dict[str, int], counts: Mapping[str, int]) -> None:
    for rid, n in counts.items():
        into[rid] = into.get(rid, 0) + n
