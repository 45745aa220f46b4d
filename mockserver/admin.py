"""The admin API under ``/__mock/``, a prefix no protocol uses: state, fixtures, journal, chaos, documents.

For client developers who run the mock as their local backend: put it in a known state, see what
their client sent, and change how unreliable it is while it runs. Every answer is JSON; bad input
is a 400 (or 404/413/415) with ``{"error": "..."}`` saying what is wrong, and changes nothing.

Every admin request passes the gate first (gate.py): a host the mock answers to, no page of
another origin, the admin token when one is set. No answer here carries CORS headers.

See ENDPOINTS below.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import yaml
from aiohttp import web

from specs.har import archive
from specs.program import __version__

from .api import ProtocolApi
from .chaos import ChaosError, Rule, load_document
from .descriptor import MockProtocol
from .gate import Gate
from .hooks import Hooks
from .journal import MAX_SIZE, Entry, har_exchange
from .matching import MatchError, parse_matcher
from .record import Recorder
from .routing import allowed_methods, templates
from .stubs import Stub, StubError, Stubs, check_schema, operations_of
from .stubs import schema as stub_schema

ENDPOINTS = """
    GET    /__mock/                         what is here
    GET    /__mock/specs/{protocol}.json    each protocol's document, for client generators
    GET    /__mock/specs/{protocol}.yaml
    POST   /__mock/reset                    empty every protocol's state
    POST   /__mock/reset/{protocol}         empty one protocol's state
    POST   /__mock/fixtures                 load fixtures (JSON, or YAML with a YAML content type)
    GET    /__mock/journal                  recent exchanges, newest first (?protocol=&operation=&status=&limit=)
    PUT    /__mock/journal                  {"size": N}: keep the last N exchanges (0 turns it off)
    DELETE /__mock/journal                  forget the recorded exchanges
    GET    /__mock/journal.har              the journal as HAR 1.2 (oldest first), for HAR viewers
    POST   /__mock/requests/count           how many journalled requests match: {"count": N}
    POST   /__mock/requests/find            the journalled requests that match, newest first
    GET    /__mock/chaos                    the chaos rules in force
    PUT    /__mock/chaos                    replace them: {"seed": N, "rules": [...]}
    POST   /__mock/chaos/rules              add one rule
    DELETE /__mock/chaos                    remove every rule
    GET    /__mock/stubs                    the stubs in force (with their hits) and the data stubs
    PUT    /__mock/stubs                    replace them all: {"stubs": [...], "data": {...}}
    DELETE /__mock/stubs                    remove every stub and data stub
    POST   /__mock/stubs                    add one stub (201)
    GET    /__mock/stubs/schema             the JSON schema of a stubs document
    GET    /__mock/stubs/{id}               one stub
    PUT    /__mock/stubs/{id}               replace one stub, in its place
    DELETE /__mock/stubs/{id}               remove one stub
    GET    /__mock/recording                what --record URL saw so far, as a stubs document
"""
PREFIX = "/__mock"
MAX_BODY = 1 << 20
"""Largest admin request body (a fixtures document included): 1 MiB."""
MAX_LIMIT = MAX_SIZE
"""Most journal entries one GET returns (all a journal can hold)."""
YAML_TYPES = ("application/yaml", "application/x-yaml", "text/yaml", "text/x-yaml")


class AdminError(Exception):
    def __init__(self, status: int, message: str) -> None:
        self.status = status
        super().__init__(message)


Handler = Callable[[web.Request], Awaitable[Any]]


def _json(body: Any, status: int = 200) -> web.Response:
    return web.Response(body=json.dumps(body, indent=2).encode(), status=status, content_type="application/json")


def _guarded(gate: Gate, handler: Handler) -> Callable[[web.Request], Awaitable[web.StreamResponse]]:
    async def endpoint(request: web.Request) -> web.StreamResponse:
        refused = gate.refuse_admin(request)
        if refused is not None:
            return refused
        try:
            result = await handler(request)
        except AdminError as exc:
            return _json({"error": str(exc)}, exc.status)
        except (ChaosError, StubError) as exc:
            return _json({"error": str(exc)}, 400)
        return result if isinstance(result, web.StreamResponse) else _json(result)

    return endpoint


async def read_document(request: web.Request) -> Any:
    """The request's JSON or YAML body, bounded; a clear 4xx for anything else."""
    if request.content_length is not None and request.content_length > MAX_BODY:
        raise AdminError(413, f"the body is larger than {MAX_BODY} bytes")
    data = b""
    while chunk := await request.content.read(MAX_BODY + 1 - len(data)):  # read(n) gives what has arrived
        data += chunk
        if len(data) > MAX_BODY:
            raise AdminError(413, f"the body is larger than {MAX_BODY} bytes")
    if not data.strip():
        raise AdminError(400, "a JSON (or YAML) body is required")
    media = request.content_type
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise AdminError(400, "the body is not UTF-8") from None
    if media in YAML_TYPES:
        try:
            return yaml.safe_load(text)
        except yaml.YAMLError as exc:
            raise AdminError(400, f"the body is not valid YAML: {exc}") from None
    # curl -d labels its body x-www-form-urlencoded: read it as the JSON it is
    if media not in ("application/json", "application/octet-stream", "application/x-www-form-urlencoded", ""):
        raise AdminError(415, f"send application/json or application/yaml, not {media}")
    try:
        return json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise AdminError(400, f"the body is not valid JSON: {exc}") from None


class Admin:
    def __init__(
        self,
        apis: Mapping[str, ProtocolApi],
        hooks: Hooks,
        mocks: Mapping[str, MockProtocol],
        stubs: Stubs,
        recorder: Recorder | None = None,
    ) -> None:
        self.recorder = recorder
        self.apis = apis
        self.mocks = mocks
        self.stubs = stubs
        self.hooks = hooks
        self.gate = hooks.gate
        self.operations = {pid: {op.operation_id for op in api.spec.operations()} for pid, api in apis.items()}

    def routes(self) -> list[web.RouteDef]:
        p = PREFIX
        table: list[tuple[str, str, Handler]] = [
            ("GET", f"{p}", self.index),
            ("GET", f"{p}/", self.index),
            ("GET", f"{p}/specs/{{name}}", self.spec),
            ("POST", f"{p}/reset", self.reset),
            ("POST", f"{p}/reset/{{protocol}}", self.reset),
            ("POST", f"{p}/fixtures", self.fixtures),
            ("GET", f"{p}/journal", self.journal),
            ("PUT", f"{p}/journal", self.journal_size),
            ("DELETE", f"{p}/journal", self.journal_clear),
            ("GET", f"{p}/journal.har", self.journal_har),
            ("POST", f"{p}/requests/count", self.requests_count),
            ("POST", f"{p}/requests/find", self.requests_find),
            ("GET", f"{p}/chaos", self.chaos),
            ("PUT", f"{p}/chaos", self.chaos_replace),
            ("DELETE", f"{p}/chaos", self.chaos_clear),
            ("POST", f"{p}/chaos/rules", self.chaos_add),
            ("GET", f"{p}/stubs", self.stubs_list),
            ("PUT", f"{p}/stubs", self.stubs_replace),
            ("DELETE", f"{p}/stubs", self.stubs_clear),
            ("POST", f"{p}/stubs", self.stub_add),
            ("GET", f"{p}/stubs/schema", self.stubs_schema),
            ("GET", f"{p}/stubs/{{stub_id}}", self.stub_get),
            ("PUT", f"{p}/stubs/{{stub_id}}", self.stub_replace),
            ("DELETE", f"{p}/stubs/{{stub_id}}", self.stub_delete),
            ("GET", f"{p}/recording", self.recording),
        ]
        self._routes = [web.route(method, path, _guarded(self.gate, handler)) for method, path, handler in table]
        return self._routes

    def fallback(self) -> list[web.RouteDef]:
        """Unknown admin paths (404) and methods (405), a preflight among them, in the admin's shape."""
        compiled = templates(self._routes)

        async def serve(request: web.Request) -> web.StreamResponse:
            refused = self.gate.refuse_admin(request)
            if refused is not None:
                return refused
            allowed = allowed_methods(compiled, request.path)
            if allowed:
                error = _json({"error": f"{request.method} is not allowed here; allowed: {', '.join(allowed)}"}, 405)
                error.headers["Allow"] = ",".join(allowed)
                return error
            return _json({"error": f"no admin endpoint {request.path}; see GET {PREFIX}/"}, 404)

        return [web.route("*", path, serve) for path in (PREFIX, f"{PREFIX}/{{tail:.*}}")]

    def protocol(self, name: str) -> ProtocolApi:
        api = self.apis.get(name)
        if api is None:
            raise AdminError(404, f"no protocol {name!r} is served here; served: {', '.join(sorted(self.apis))}")
        return api

    async def index(self, request: web.Request) -> Any:
        return {
            "protocols": {
                pid: {
                    "base_path": api.base_path,
                    "documents": [f"{PREFIX}/specs/{pid}.json", f"{PREFIX}/specs/{pid}.yaml"],
                    "stateful": bool(api.stores),
                }
                for pid, api in self.apis.items()
            },
            "journal": {"size": self.hooks.journal.size, "entries": len(self.hooks.journal.entries)},
            "chaos": self.hooks.chaos.to_json(),
            "endpoints": [" ".join(line.split()) for line in ENDPOINTS.strip().splitlines()],
        }

    async def spec(self, request: web.Request) -> web.StreamResponse:
        name = request.match_info["name"]
        stem, dot, ext = name.rpartition(".")
        if not dot or ext not in ("json", "yaml"):
            raise AdminError(404, f"documents are at {PREFIX}/specs/<protocol>.json or .yaml")
        document = self.protocol(stem).spec.raw
        if ext == "json":
            return _json(document)
        text = yaml.safe_dump(document, sort_keys=False, allow_unicode=True)
        return web.Response(text=text, content_type="application/yaml")

    async def reset(self, request: web.Request) -> Any:
        name = request.match_info.get("protocol")
        apis = [self.protocol(name)] if name is not None else list(self.apis.values())
        for api in apis:
            api.reset()
            self.stubs.reset_hits(api.protocol_id)
        return {"reset": [api.protocol_id for api in apis]}

    async def fixtures(self, request: web.Request) -> Any:
        from .fixtures import FixtureError, load

        document = await read_document(request)
        try:
            return {"loaded": load(self.apis, document, {pid: m.fixtures for pid, m in self.mocks.items()})}
        except FixtureError as exc:
            raise AdminError(400, str(exc)) from None

    async def journal(self, request: web.Request) -> Any:
        journal = self.hooks.journal
        self._journal_on()
        query = request.query
        unknown = sorted(set(query) - {"protocol", "operation", "status", "limit"})
        if unknown:
            raise AdminError(400, f"unknown filter(s) {', '.join(unknown)}: protocol, operation, status, limit")
        protocol = query.get("protocol")
        if protocol is not None:
            self.protocol(protocol)
        operation = query.get("operation")
        if operation is not None and not any(operation in ops for ops in self.operations.values()):
            raise AdminError(400, f"no served protocol has an operation {operation!r}")
        status = _int(query, "status", 0, 599)
        limit = _int(query, "limit", 1, MAX_LIMIT)
        entries = journal.find(protocol, operation, status, limit if limit is not None else MAX_LIMIT)
        return {"size": journal.size, "total": len(journal.entries), "entries": [e.view() for e in entries]}

    def _journal_on(self) -> None:
        if not self.hooks.journal.enabled:
            raise AdminError(
                409,
                f"the journal is off: start the mock with --journal, or PUT {PREFIX}/journal "
                '{"size": N} to keep the last N exchanges',
            )

    async def journal_har(self, request: web.Request) -> Any:
        self._journal_on()
        origin = f"{request.scheme}://{request.host}"
        entries = list(self.hooks.journal.entries)
        return archive(
            (har_exchange(origin, e) for e in entries),
            "agent-mock",
            __version__,
            f"the mock's journal: the last {self.hooks.journal.size} exchanges at most; credentials redacted",
        )

    async def _matching(self, request: web.Request) -> list[Entry]:
        """The journalled requests the body's predicates hold for (the stub matcher's), newest first."""
        self._journal_on()
        raw = await read_document(request)
        check_schema("request", raw, "request")
        try:
            matcher = parse_matcher("request", raw, operations_of(self.apis))
        except MatchError as exc:
            raise AdminError(400, str(exc)) from None
        return [e for e in reversed(self.hooks.journal.entries) if matcher.matches(e.seen())]

    async def requests_count(self, request: web.Request) -> Any:
        found = await self._matching(request)
        return {
            "count": len(found),
            "journal": {"size": self.hooks.journal.size, "entries": len(self.hooks.journal.entries)},
        }

    async def requests_find(self, request: web.Request) -> Any:
        found = await self._matching(request)
        return {"requests": [e.view() for e in found]}

    async def journal_size(self, request: web.Request) -> Any:
        document = await read_document(request)
        size = document.get("size") if isinstance(document, dict) else None
        if isinstance(size, bool) or not isinstance(size, int) or set(document) != {"size"}:
            raise AdminError(400, f'send {{"size": N}}, N from 0 (off) to {MAX_SIZE}')
        try:
            self.hooks.journal.resize(size)
        except ValueError as exc:
            raise AdminError(400, str(exc)) from None
        self.hooks.refresh()
        return {"size": size}

    async def journal_clear(self, request: web.Request) -> Any:
        self.hooks.journal.clear()
        return {"size": self.hooks.journal.size, "entries": 0}

    async def chaos(self, request: web.Request) -> Any:
        return self.hooks.chaos.to_json()

    async def chaos_replace(self, request: web.Request) -> Any:
        rules, seed = load_document(await read_document(request), self.operations)
        self.hooks.chaos.replace(rules, seed)
        self.hooks.refresh()
        return self.hooks.chaos.to_json()

    async def chaos_add(self, request: web.Request) -> Any:
        rule = Rule.parse(await read_document(request), self.operations)
        self.hooks.chaos.add(rule)
        self.hooks.refresh()
        return self.hooks.chaos.to_json()

    async def chaos_clear(self, request: web.Request) -> Any:
        self.hooks.chaos.replace(())
        self.hooks.refresh()
        return self.hooks.chaos.to_json()

    # -- stubs ---------------------------------------------------------------------------------
    async def stubs_list(self, request: web.Request) -> Any:
        return self.stubs.view()

    async def stubs_replace(self, request: web.Request) -> Any:
        self.stubs.load(await read_document(request))
        return self.stubs.view()

    async def stubs_clear(self, request: web.Request) -> Any:
        self.stubs.load({})
        return self.stubs.view()

    async def stub_add(self, request: web.Request) -> Any:
        stub = self.stubs.add(await read_document(request))
        return _json(stub.view(), 201)

    async def stubs_schema(self, request: web.Request) -> Any:
        return stub_schema()

    def _stub(self, request: web.Request) -> Stub:
        stub = self.stubs.find(request.match_info["stub_id"])
        if stub is None:
            raise AdminError(404, f"no stub {request.match_info['stub_id']!r}; see GET {PREFIX}/stubs")
        return stub

    async def stub_get(self, request: web.Request) -> Any:
        return self._stub(request).view()

    async def stub_replace(self, request: web.Request) -> Any:
        stub = self._stub(request)
        return self.stubs.replace(stub.id, await read_document(request)).view()

    async def stub_delete(self, request: web.Request) -> Any:
        stub = self._stub(request)
        self.stubs.delete(stub.id)
        return {"deleted": stub.id}

    async def recording(self, request: web.Request) -> Any:
        if self.recorder is None:
            raise AdminError(409, "this mock is not recording: start it with --record URL")
        return self.recorder.document(self.apis)


def _int(query: Mapping[str, str], name: str, low: int, high: int) -> int | None:
    value = query.get(name)
    if value is None:
        return None
    try:
        number = int(value)
    except ValueError:
        raise AdminError(400, f"{name} must be a whole number, got {value!r}") from None
    if not low <= number <= high:
        raise AdminError(400, f"{name} must be between {low} and {high}, got {number}")
    return number
