"""Requests and answers judged against the document: parameters, bodies, statuses, content types,
headers and security, with the suite's compiled validators (SchemaSet).

Verdicts go to the generic ``<PREFIX>-SCHEMA-NNN`` requirements the schema phase decides by
generating traffic, and to ``<PREFIX>-CLIENT-001``, the client's own requests (registered here:
only a proxy sees a client's traffic).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from specs.documents import PROTOCOLS, Operation, Spec
from specs.schemas import SchemaSet

from ..check.judgments import events
from ..check.passive import Verdict
from ..check.shown import shown
from ..check.streams import Frame
from ..check.traffic import NotJson, Observed, multipart_fields
from ..verdicts.requirements import Level, Registry, Requirement

CLIENT_REGISTRIES: dict[str, Registry] = {}


def client_registry(protocol_id: str) -> Registry:
    """The requirements on a client's traffic, which no server-side run can decide."""
    if protocol_id not in CLIENT_REGISTRIES:
        info = PROTOCOLS[protocol_id]
        registry = Registry(protocol_id)
        registry.add(
            Requirement(
                f"{info.prefix}-CLIENT-001",
                Level.MUST,
                "Every request the client sends matches the document: known operation, parameters, "
                "request body and its content type",
                f"{info.document} (every operation)",
                protocol_id,
                phase="proxy",
                from_traffic=True,
            ),
            None,
        )
        CLIENT_REGISTRIES[protocol_id] = registry
    return CLIENT_REGISTRIES[protocol_id]


def _coerce(raw: str, schema: Mapping[str, Any]) -> Any:
    kind = schema.get("type")
    try:
        if kind == "integer":
            return int(raw)
        if kind == "number":
            return float(raw)
    except ValueError:
        return raw
    if kind == "boolean" and raw.lower() in ("true", "false"):
        return raw.lower() == "true"
    return raw


@dataclass(frozen=True, slots=True)
class _Operation:
    """What the document says of one operation's requests, compiled once."""

    parameters: tuple[tuple[str, str, bool, Mapping[str, Any]], ...]
    """(name, in, required, schema), the path item's included."""
    body: Mapping[str, Any]
    """The resolved requestBody (empty when none is declared)."""
    needs_credentials: bool
    streamed: bool
    server_errors: tuple[str, ...]
    """5xx statuses the protocol allows this operation (``not_a_server_error``)."""
    accepts: tuple[str, ...]
    """400/422 statuses that do not mean a conforming request was rejected."""


@dataclass(frozen=True, slots=True)
class _Answer:
    """What the document says of one operation's answers with one status, compiled once."""

    spec: Mapping[str, Any] | None
    headers: tuple[tuple[str, bool, Mapping[str, Any]], ...]
    content: Mapping[str, Any]


class DocumentJudge:
    """The document's view of one exchange; ``schema_ids`` are the generic ids registered for it."""

    def __init__(
        self,
        spec: Spec,
        schemas: SchemaSet,
        schema_ids: set[str],
        expected_statuses: Mapping[str, Mapping[str, tuple[str, ...]]],
        streaming_operations: tuple[str, ...],
        tokens: tuple[str, ...],
    ) -> None:
        self.spec = spec
        self.schemas = schemas
        self.prefix = spec.info.prefix
        self.ids = schema_ids
        self.expected = expected_statuses
        self.streaming = streaming_operations
        self.tokens = tokens
        self.client_id = f"{self.prefix}-CLIENT-001"
        self._rids = {number: self.rid(number) for number in ("001", "002", "003", "004", "005", "006", "007", "010")}
        self._operations: dict[str, _Operation] = {}
        self._answers: dict[tuple[str, int], _Answer] = {}

    def rid(self, number: str) -> str | None:
        rid = f"{self.prefix}-SCHEMA-{number}"
        return rid if rid in self.ids else None

    def _held(self, verdict: Verdict, number: str) -> None:
        rid = self._rids[number]
        if rid:
            verdict.ok(rid)

    def _fail(self, verdict: Verdict, number: str, reason: str) -> None:
        rid = self._rids[number]
        if rid:
            verdict.fail(rid, reason)

    def _broke(self, verdict: Verdict, number: str, reason: Callable[[], str]) -> None:
        """Broken, with the reason built only then (a passing exchange formats nothing)."""
        rid = self._rids[number]
        if rid:
            verdict.fail(rid, reason())

    def _record(self, verdict: Verdict, number: str, condition: bool, reason: Callable[[], str]) -> None:
        if condition:
            self._held(verdict, number)
        else:
            self._broke(verdict, number, reason)

    def operation(self, op: Operation) -> _Operation:
        compiled = self._operations.get(op.operation_id)
        if compiled is None:
            resolve = self.spec.resolve
            item = self.spec.raw["paths"][op.path]
            declared = {(p["name"], p["in"]): p for p in map(resolve, item.get("parameters", []))}
            declared.update({(p["name"], p["in"]): p for p in map(resolve, op.definition.get("parameters", []))})
            security = op.definition.get("security", self.spec.raw.get("security"))
            expected = self.expected.get(op.operation_id, {})
            compiled = self._operations[op.operation_id] = _Operation(
                tuple(
                    (name, where, bool(p.get("required")), resolve(p.get("schema") or {}))
                    for (name, where), p in declared.items()
                ),
                resolve(op.definition.get("requestBody") or {}),
                bool(security) and all(bool(requirement) for requirement in security),
                op.operation_id in self.streaming,
                tuple(expected.get("not_a_server_error", ())),
                tuple(expected.get("positive_data_acceptance", ())),
            )
        return compiled

    # requests -----------------------------------------------------------------------------------
    def request_problems(self, ex: Observed) -> list[str]:
        """How the request departs from the document; empty when it conforms."""
        op = ex.operation
        if op is None:
            return [f"{ex.method} {ex.path} is no operation of the document"]
        compiled = self.operation(op)
        problems: list[str] = []
        for name, where, required, schema in compiled.parameters:
            if where == "path":
                raw: str | None = ex.path_params.get(name)
            elif where == "query":
                raw = ex.param(name) if ex.query else None
            elif where == "header":
                raw = ex.request_headers.get(name.lower())
            else:
                continue
            if raw is None:
                if required:
                    problems.append(f"required {where} parameter {shown(name)} is missing")
                continue
            for v in self.schemas.violations(schema, _coerce(raw, schema), limit=2):
                problems.append(f"{where} parameter {shown(name)}={shown(raw[:80])}: {v.message}")
        if ex.request_body or compiled.body:
            problems += self._body_problems(ex, compiled.body)
        return problems

    def _body_problems(self, ex: Observed, body: Mapping[str, Any]) -> list[str]:
        content = body.get("content") or {}
        if not ex.request_body:
            return ["the required request body is missing"] if body.get("required") else []
        if not content:
            return []  # the document says nothing of a body here
        media = ex.request_content_type
        if media not in content:
            return [
                f"request Content-Type {shown(media) if media else '(none)'} is not one of {shown(sorted(content))}"
            ]
        schema = content[media].get("schema")
        if "json" in media:
            value = ex.request_json()
            if isinstance(value, NotJson):
                return [f"the request body is not JSON ({value.reason})"]
            if schema is None:
                return []
            return [f"request body {v}" for v in self.schemas.violations(schema, value, limit=3)]
        if media == "multipart/form-data" and schema is not None:
            fields = multipart_fields(ex)
            if fields is None:
                return ["the multipart request body does not parse"]
            required = self.spec.resolve(schema).get("required", [])
            return [f"multipart field {shown(name)} is missing" for name in required if name not in fields]
        return []

    def judge_request(self, ex: Observed, problems: list[str], verdict: Verdict) -> None:
        if problems:
            verdict.fail(self.client_id, "; ".join(problems[:3]))
        else:
            verdict.ok(self.client_id)

    # answers ------------------------------------------------------------------------------------
    def answer(self, op: Operation, status: int) -> _Answer:
        key = (op.operation_id, status)
        compiled = self._answers.get(key)
        if compiled is None:
            spec = self.spec.response(op, status)
            headers = (
                tuple(
                    (name.lower(), bool(h.get("required")), self.spec.resolve(h.get("schema") or {}))
                    for name, h in ((n, self.spec.resolve(h)) for n, h in (spec.get("headers") or {}).items())
                )
                if spec is not None
                else ()
            )
            content = (spec.get("content") or {}) if spec is not None else {}
            compiled = self._answers[key] = _Answer(spec, headers, content)
        return compiled

    def response_spec(self, ex: Observed) -> Mapping[str, Any] | None:
        assert ex.operation is not None and ex.status is not None
        return self.answer(ex.operation, ex.status).spec

    def judge_response(self, ex: Observed, problems: list[str], verdict: Verdict) -> None:
        """Status, content type, headers and (for a whole answer) body; the request's fate."""
        op, status = ex.operation, ex.status
        if op is None or status is None:
            return
        op_id = op.operation_id
        compiled = self.operation(op)
        self._record(
            verdict,
            "001",
            status < 500 or str(status) in compiled.server_errors,
            lambda: f"{op_id} answered {status}",
        )
        if problems:
            self._record(
                verdict,
                "006",
                not 200 <= status < 400,
                lambda: f"{op_id} accepted ({status}) a request that violates the document: {'; '.join(problems[:2])}",
            )
        elif not ex.left_open:
            rejected = status in (400, 422) and str(status) not in compiled.accepts
            self._record(verdict, "007", not rejected, lambda: f"{op_id} rejected ({status}) a request that conforms")
        if compiled.needs_credentials:
            bearer = ex.bearer
            if not bearer or (self.tokens and bearer not in self.tokens):
                self._record(
                    verdict,
                    "010",
                    status in (401, 403),
                    lambda: f"{op_id} answered {status} to a request without valid credentials",
                )
        if 400 <= status < 500 and _unaccepted_media(ex, compiled.body):
            # answered by HTTP's rules (415), not the document's: as the run's property-based phase
            # (schemathesis skips its request-shape probes' answers), so both judge it alike
            return
        answer = self.answer(op, status)
        if answer.spec is None:
            return self._broke(verdict, "002", lambda: f"{op_id}: status {status} is not documented")
        self._held(verdict, "002")
        for name, required, schema in answer.headers:
            value = ex.response_headers.get(name)
            if value is None:
                if required:
                    self._fail(verdict, "004", f"{op_id} {status}: required header {name} is missing")
                continue
            found = self.schemas.violations(schema, _coerce(value, schema), limit=1) if schema else []
            if found:
                self._fail(verdict, "004", f"{op_id} {status}: header {name}: {found[0]}")
            else:
                self._held(verdict, "004")
        content = answer.content
        if not content or (not ex.response_body and not ex.streamed):
            return
        media = ex.content_type
        if (ex.streamed or compiled.streamed) and 200 <= status < 300:
            return  # a stream's label is its protocol's stream requirement's fact (NS-STREAM-003, SGR-STREAM-001)
        if media not in content:
            return self._broke(
                verdict,
                "003",
                lambda: (
                    f"{op_id} {status}: Content-Type {shown(media) if media else '(none)'} is not one of "
                    f"{shown(sorted(content))}"
                ),
            )
        self._held(verdict, "003")
        if ex.streamed or compiled.streamed or "json" not in media:
            return  # a stream's events are judged one by one (``items``, ``judge_event``)
        schema = content[media].get("schema")
        body = ex.json()
        if isinstance(body, NotJson):
            self._broke(verdict, "005", lambda: f"{op_id} {status}: the body is not JSON ({body.reason})")
        elif schema is not None:
            found_body = self.schemas.violations(schema, body, limit=3)
            self._record(
                verdict, "005", not found_body, lambda: f"{op_id} {status} body: " + "; ".join(map(str, found_body))
            )

    # a stream's events -------------------------------------------------------------------------------
    def items(self, ex: Observed) -> events.Items | None:
        """The judge of this stream's events against the document's item schema (None: the
        document gives its answer none, or SCHEMA-005 is not registered for it)."""
        if ex.operation is None or ex.status is None or self._rids["005"] is None:
            return None
        schema = events.item_schema(self.spec, ex.operation, ex.status)
        return events.Items(self.schemas, schema) if schema is not None else None

    def judge_event(self, ex: Observed, items: events.Items, frame: Frame, verdict: Verdict) -> None:
        """One event by the run's rule (``events.items``), the finding naming it as the run's does."""
        rid = self._rids["005"]
        if rid and ex.operation is not None:
            facts = events.facts_of(self.spec, items.schema)
            what = f"{ex.operation.operation_id} {ex.status}"
            verdict.found(rid, events.ITEMS, facts, items.problems(frame), what)


def _unaccepted_media(ex: Observed, body: Mapping[str, Any] | None) -> bool:
    """The request says its body is in a media type the operation does not take."""
    content = (body or {}).get("content") or {}
    media = ex.request_content_type
    return bool(content) and bool(media) and media not in content
