"""Requests and answers judged against the document: parameters, bodies, statuses, content types,
headers and security, with the suite's compiled validators (SchemaSet).

Verdicts go to the generic ``<PREFIX>-SCHEMA-NNN`` requirements the schema phase decides by
generating traffic, and to ``<PREFIX>-CLIENT-001``, the client's own requests (registered here:
only a proxy sees a client's traffic).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from specs.documents import PROTOCOLS, Operation, Spec
from specs.schemas import SchemaSet

from ..check.passive import Verdict
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
        self._params: dict[str, list[tuple[str, str, bool, Mapping[str, Any]]]] = {}
        self._responses: dict[tuple[str, int], Any] = {}
        self._headers: dict[int, list[tuple[str, bool, Mapping[str, Any]]]] = {}

    def rid(self, number: str) -> str | None:
        rid = f"{self.prefix}-SCHEMA-{number}"
        return rid if rid in self.ids else None

    def _record(self, verdict: Verdict, number: str, condition: bool, reason: str) -> None:
        rid = self.rid(number)
        if rid:
            verdict.check(rid, condition, reason)

    # requests -----------------------------------------------------------------------------------
    def request_problems(self, ex: Observed) -> list[str]:
        """How the request departs from the document; empty when it conforms."""
        op = ex.operation
        if op is None:
            return [f"{ex.method} {ex.path} is no operation of the document"]
        problems: list[str] = []
        for name, where, required, schema in self._parameters(op):
            if where == "path":
                raw: str | None = ex.path_params.get(name)
            elif where == "query":
                raw = ex.param(name)
            elif where == "header":
                raw = ex.request_headers.get(name.lower())
            else:
                continue
            if raw is None:
                if required:
                    problems.append(f"required {where} parameter {name!r} is missing")
                continue
            for v in self.schemas.violations(schema, _coerce(raw, schema), limit=2):
                problems.append(f"{where} parameter {name!r}={raw[:80]!r}: {v.message}")
        problems += self._body_problems(ex, self.spec.resolve(op.definition.get("requestBody") or {}))
        return problems

    def _parameters(self, op: Operation) -> list[tuple[str, str, bool, Mapping[str, Any]]]:
        """(name, in, required, schema) of an operation's parameters, path item's included; once."""
        cached = self._params.get(op.operation_id)
        if cached is None:
            item = self.spec.raw["paths"][op.path]
            declared = {(p["name"], p["in"]): p for p in map(self.spec.resolve, item.get("parameters", []))}
            declared.update(
                {(p["name"], p["in"]): p for p in map(self.spec.resolve, op.definition.get("parameters", []))}
            )
            cached = self._params[op.operation_id] = [
                (name, where, bool(p.get("required")), self.spec.resolve(p.get("schema") or {}))
                for (name, where), p in declared.items()
            ]
        return cached

    def _body_problems(self, ex: Observed, body: Mapping[str, Any]) -> list[str]:
        content = body.get("content") or {}
        if not ex.request_body:
            return ["the required request body is missing"] if body.get("required") else []
        if not content:
            return []  # the document says nothing of a body here
        media = ex.request_content_type
        if media not in content:
            return [f"request Content-Type {media or '(none)'!r} is not one of {sorted(content)}"]
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
            return [f"multipart field {name!r} is missing" for name in required if name not in fields]
        return []

    def _needs_credentials(self, ex: Observed) -> bool:
        assert ex.operation is not None
        security = ex.operation.definition.get("security", self.spec.raw.get("security"))
        return bool(security) and all(bool(requirement) for requirement in security)

    def judge_request(self, ex: Observed, problems: list[str], verdict: Verdict) -> None:
        verdict.check(self.client_id, not problems, "; ".join(problems[:3]))

    # answers ------------------------------------------------------------------------------------
    def response_spec(self, ex: Observed) -> Mapping[str, Any] | None:
        assert ex.operation is not None and ex.status is not None
        key = (ex.operation.operation_id, ex.status)
        if key not in self._responses:
            responses = ex.operation.definition.get("responses", {})
            found = next(
                (responses[k] for k in (str(ex.status), f"{str(ex.status)[0]}XX", "default") if k in responses), None
            )
            self._responses[key] = self.spec.resolve(found) if found is not None else None
        return self._responses[key]  # type: ignore[no-any-return]

    def _declared_headers(self, spec: Mapping[str, Any]) -> list[tuple[str, bool, Mapping[str, Any]]]:
        cached = self._headers.get(id(spec))
        if cached is None:
            cached = self._headers[id(spec)] = [
                (name.lower(), bool(h.get("required")), self.spec.resolve(h.get("schema") or {}))
                for name, h in ((n, self.spec.resolve(h)) for n, h in (spec.get("headers") or {}).items())
            ]
        return cached

    def judge_response(self, ex: Observed, problems: list[str], verdict: Verdict) -> None:
        """Status, content type, headers and (for a whole answer) body; the request's fate."""
        if ex.operation is None or ex.status is None:
            return
        op_id = ex.operation.operation_id
        status = ex.status
        allowed_5xx = self.expected.get(op_id, {}).get("not_a_server_error", ())
        self._record(verdict, "001", status < 500 or str(status) in allowed_5xx, f"{op_id} answered {status}")
        rejected = status in (400, 422) and str(status) not in self.expected.get(op_id, {}).get(
            "positive_data_acceptance", ()
        )
        if problems:
            self._record(
                verdict,
                "006",
                not 200 <= status < 400,
                f"{op_id} accepted ({status}) a request that violates the document: {'; '.join(problems[:2])}",
            )
        elif ex.operation is not None:
            self._record(verdict, "007", not rejected, f"{op_id} rejected ({status}) a request that conforms")
        if self._needs_credentials(ex):
            anonymous = ex.bearer is None or ex.bearer == "" or (self.tokens and ex.bearer not in self.tokens)
            if anonymous:
                self._record(
                    verdict,
                    "010",
                    status in (401, 403),
                    f"{op_id} answered {status} to a request without valid credentials",
                )
        spec = self.response_spec(ex)
        self._record(verdict, "002", spec is not None, f"{op_id}: status {status} is not documented")
        if spec is None:
            return
        for name, required, schema in self._declared_headers(spec):
            value = ex.response_headers.get(name)
            if value is None:
                if required:
                    self._record(verdict, "004", False, f"{op_id} {status}: required header {name} is missing")
                continue
            found = self.schemas.violations(schema, _coerce(value, schema), limit=1) if schema else []
            self._record(verdict, "004", not found, f"{op_id} {status}: header {name}: {found[0] if found else ''}")
        content = spec.get("content") or {}
        if not content or (not ex.response_body and not ex.streamed):
            return
        media = ex.content_type
        self._record(
            verdict,
            "003",
            media in content,
            f"{op_id} {status}: Content-Type {media or '(none)'!r} is not one of {sorted(content)}",
        )
        if media not in content or ex.streamed or op_id in self.streaming or "json" not in media:
            return  # streams are judged frame by frame by the protocol's passive checks
        schema = content[media].get("schema")
        body = ex.json()
        if isinstance(body, NotJson):
            self._record(verdict, "005", False, f"{op_id} {status}: the body is not JSON ({body.reason})")
        elif schema is not None:
            found = self.schemas.violations(schema, body, limit=3)
            self._record(verdict, "005", not found, f"{op_id} {status} body: " + "; ".join(map(str, found)))
