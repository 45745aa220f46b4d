"""Stubs: what the mock answers instead of its handlers, for the calls a client developer names.

WireMock's stub mappings are the anchor. A stubs document (``--stubs FILE``, YAML or JSON, or the
admin API under ``/__mock/stubs``) holds ``stubs``, each a ``request`` to match and a ``response``
to give, and ``data``, each protocol's data stubs (agent networks, models and replies, step plans,
job outcomes: what its handlers consult, read by the ``stubs`` part of its descriptor)::

    stubs:
      - id: owls                                  # optional; made up otherwise
        request:
          protocol: sgr-agent-core                # required, with the operation
          operation: createChatCompletion
          path: {agent_id: "..."}                 # path parameters; query, headers, identity alike
          body: [{pointer: /messages/0/content, contains: owls}]
        times: 2                                  # the first 2 matching calls only
        response:
          headers: {X-Agent-ID: sgr_agent_1}
          stream:                                 # or body: {...}, or error: {status, message}
            frames: [{data: {...}, delay: 0.2}, {data: {...}}]
          invalid: false                          # true: not validated against the document

The document is checked against ``stubs.schema.json`` (published at ``GET /__mock/stubs/schema``),
then every name against what is served, then every answer against the protocol's document: a stub
cannot drift from the protocol unless it says ``invalid: true``. Every error names the path.

Stubs match after authentication and request validation, in document order, first match wins; a
stubbed call does not reach the handler, so it changes no state. Each operation's endpoint holds
its own slot of stubs (``ProtocolApi.stub_slots``, a ``matching.Slot``): an operation no stub names
pays one empty-list test, and one that stubs name looks up the few that require the call's value
instead of trying each.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import json
import uuid
from collections.abc import Awaitable, Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema_rs
from aiohttp import ClientConnectionResetError, web

from .api import Call, ProtocolApi
from .encoding import accepts, encode
from .errors import ApiError
from .fixtures import FixtureError
from .hooks import STUBBED
from .jsonio import dumps
from .matching import MatchError, RequestMatcher, Seen, parse_matcher
from .streaming import NdjsonStream, SseStream, stall

SCHEMA_FILE = Path(__file__).with_name("stubs.schema.json")
MAX_STUBS = 20_000
"""A recording of a whole suite run holds a stub per exchange (a thousand or more)."""
MAX_MESSAGE = 300
"""Characters of a schema error's message shown (it may quote the whole offending value)."""
MAX_DELAY = 60.0
STALL_SECONDS = 300.0
"""Longest a stalling stub stream holds its connection when the client stays (bounded, as every wait)."""


class StubError(ValueError):
    """A stubs document that cannot be used; the message names the path and the problem."""


@cache
def schema() -> dict[str, Any]:
    document: dict[str, Any] = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
    return document


@cache
def _validator() -> Any:
    return jsonschema_rs.Draft202012Validator(schema())


def _where(root: str, parts: Any) -> str:
    return (root + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in parts)).lstrip(".") or "/"


def check_schema(root: str, document: Any, definition: str | None = None) -> None:
    """``document`` against the published schema (or one of its definitions), the first error named
    by its path: ``stubs[2].response.status: 99 is less than the minimum of 100``."""
    validator = _validator() if definition is None else _definition_validator(definition)
    for error in validator.iter_errors(document):
        message = error.message if len(error.message) <= MAX_MESSAGE else error.message[:MAX_MESSAGE] + "..."
        raise StubError(f"{_where(root, error.instance_path)}: {message}")


@cache
def _definition_validator(name: str) -> Any:
    return jsonschema_rs.Draft202012Validator({"$defs": schema()["$defs"], "$ref": f"#/$defs/{name}"})


@dataclass(frozen=True, slots=True)
class Frame:
    data: Any
    delay: float = 0.0
    event: str | None = None
    """SSE only: the event's type (an ``event:`` field); None is the default, ``message``."""


@dataclass(frozen=True, slots=True)
class Answer:
    status: int = 200
    headers: Mapping[str, str] = field(default_factory=dict)
    content_type: str | None = None
    body: Any = None
    has_body: bool = False
    frames: tuple[Frame, ...] | None = None
    stream_format: str | None = None
    """``sse`` or ``ndjson``; None: by the document's media type."""
    done: bool = True
    """SSE only: end with ``data: [DONE]``."""
    stall: bool = False
    """After the frames, send nothing more and keep the stream open until the client leaves
    (bounded by STALL_SECONDS): a stream that never ends, as a recording saw it."""
    error: ApiError | None = None
    delay: float = 0.0
    invalid: bool = False
    raw: bytes | None = None
    """``body_base64``: bytes sent as they are."""
    encoding: str | None = None
    """A content coding for the body, used when the request accepts it (``encoding.accepts``)."""


class Stub:
    """One stub: a matcher, an answer, how many calls it may answer, and how many it did."""

    def __init__(
        self,
        stub_id: str,
        matcher: RequestMatcher,
        answer: Answer,
        times: int | None,
        api: ProtocolApi,
        raw: Any,
        before_validation: bool = False,
    ) -> None:
        self.id = stub_id
        self.before_validation = before_validation
        self.matcher = matcher
        self.answer_spec = answer
        self.times = times
        self.hits = 0
        self.api = api
        self.raw = raw

    @property
    def protocol(self) -> str:
        return self.api.protocol_id

    @property
    def operation(self) -> str:
        assert self.matcher.operation is not None
        return self.matcher.operation

    def answer(self, seen: Seen, call: Call) -> Awaitable[web.StreamResponse] | None:
        """None when this stub does not take the call; else the answer to await."""
        if self.times is not None and self.hits >= self.times:
            return None
        if not self.matcher.matches(seen):
            return None
        self.hits += 1
        call.request[STUBBED] = self.id
        return self._respond(call)

    async def _respond(self, call: Call) -> web.StreamResponse:
        spec = self.answer_spec
        if spec.delay:
            await asyncio.sleep(spec.delay)
        if spec.error is not None:
            response = self.api.errors.response(spec.error)
            response.headers.update(spec.headers)
            return response
        if spec.frames is not None:
            return await self._stream(call, spec, spec.frames)
        content_type = spec.content_type or "application/json"
        headers = {"Content-Type": content_type, **spec.headers}
        if (
            not spec.has_body and spec.raw is None
        ):  # no body: no type unless the stub gave one (an empty body is no JSON)
            typed = {"Content-Type": spec.content_type} if spec.content_type else {}
            return web.Response(status=spec.status, headers={**typed, **spec.headers})
        if spec.raw is not None:
            data = spec.raw
        else:
            data = spec.body.encode() if isinstance(spec.body, str) and not _is_json(content_type) else dumps(spec.body)
        if spec.encoding is not None:
            # the coding only for a client that accepted it; Vary tells a cache the answer depends on it
            headers["Vary"] = "Accept-Encoding"
            if accepts(call.request.headers.get("Accept-Encoding"), spec.encoding):
                data, headers["Content-Encoding"] = encode(data, spec.encoding), spec.encoding
        return web.Response(body=data, status=spec.status, headers=headers)

    async def _stream(self, call: Call, spec: Answer, frames: tuple[Frame, ...]) -> web.StreamResponse:
        sse = spec.stream_format == "sse"
        headers = dict(spec.headers)
        stream: SseStream | NdjsonStream
        with self.api.gate:
            if sse:
                if spec.content_type:
                    headers["Content-Type"] = spec.content_type
                stream = SseStream(call.request, headers)
            else:
                stream = NdjsonStream(call.request, spec.content_type or "application/x-ndjson", headers)
            stream.response.set_status(spec.status)
            response = await stream.open()
            try:
                for frame in frames:
                    if frame.delay:
                        await asyncio.sleep(frame.delay)
                    if frame.event is not None and isinstance(stream, SseStream):
                        await stream.send_event(frame.event, frame.data)
                    else:
                        await stream.send(frame.data)
                if spec.stall:
                    await stall(STALL_SECONDS, call.request)
                    return response
                if sse and spec.done:
                    assert isinstance(stream, SseStream)
                    await stream.done()
                return await stream.close()
            except (ConnectionResetError, ClientConnectionResetError):
                return response

    def view(self) -> dict[str, Any]:
        return {"id": self.id, **self.raw, "hits": self.hits}


def _is_json(media: str) -> bool:
    base = media.split(";", 1)[0].strip().lower()
    return base == "application/json" or base.endswith("+json")


# -- reading a document -------------------------------------------------------------------------


def operations_of(apis: Mapping[str, ProtocolApi]) -> dict[str, dict[str, set[str]]]:
    """Per served protocol, each operation and its path parameter names."""
    out: dict[str, dict[str, set[str]]] = {}
    for pid, api in apis.items():
        ops: dict[str, set[str]] = {}
        for op in api.spec.operations():
            params = [*api.spec.raw["paths"][op.path].get("parameters", []), *op.definition.get("parameters", [])]
            ops[op.operation_id] = {
                p["name"]
                for p in (api.spec.resolve(p) for p in params)
                if isinstance(p, Mapping) and p.get("in") == "path"
            }
        out[pid] = ops
    return out


def parse_stub(where: str, raw: Any, apis: Mapping[str, ProtocolApi]) -> Stub:
    check_schema(where, raw, "stub")
    try:
        matcher = parse_matcher(f"{where}.request", raw["request"], operations_of(apis))
    except MatchError as exc:
        raise StubError(str(exc)) from None
    assert matcher.protocol is not None and matcher.operation is not None  # the schema requires both
    early = bool(raw.get("before_validation", False))
    api = apis[matcher.protocol]
    if early and matcher.identity is not None:  # the caller is known only once authenticated
        raise StubError(f"{where}.request.identity: a stub matched before validation matches no identity")
    if early and matcher.body and not json_operation(api, matcher.operation):
        raise StubError(f"{where}.request.body: before validation, only a JSON body can be matched")
    answer = _parse_answer(f"{where}.response", raw["response"], api, matcher.operation)
    stub_id = str(raw.get("id") or uuid.uuid4().hex)
    view = {k: v for k, v in raw.items() if k != "id"}
    return Stub(stub_id, matcher, answer, raw.get("times"), api, view, early)


def json_operation(api: ProtocolApi, operation_id: str) -> bool:
    """Whether the operation takes a body, and only as JSON."""
    content = (api.spec.resolve(api.spec.operation(operation_id).definition.get("requestBody") or {})).get("content")
    return bool(content) and all(_is_json(media) for media in content)


def _parse_answer(where: str, raw: Mapping[str, Any], api: ProtocolApi, operation_id: str) -> Answer:
    given = [part for part in ("body", "body_base64", "stream", "error") if part in raw]
    if len(given) > 1:
        raise StubError(f"{where}: give one of body, body_base64, stream, error, not {' and '.join(given)}")
    if "error" in raw and "status" in raw:
        raise StubError(f"{where}.status: an error answer takes its status from error.status")
    headers = {str(k): str(v) for k, v in (raw.get("headers") or {}).items()}
    invalid = bool(raw.get("invalid", False))
    delay = float(raw.get("delay", 0.0))
    encoding = raw.get("encoding")
    if encoding is not None and not ("body" in raw or "body_base64" in raw):
        raise StubError(f"{where}.encoding: only a body (body or body_base64) is sent in a content coding")
    if "error" in raw:
        error = ApiError(raw["error"]["status"], raw["error"].get("message"))
        answer = Answer(error.status, headers, error=error, delay=delay, invalid=invalid)
        if not invalid:
            _check_answer(where, api, operation_id, error.status, None, api.errors.body(error), None, error=True)
        return answer
    status = int(raw.get("status", 200))
    content_type = raw.get("content_type")
    if "stream" in raw:
        stream = raw["stream"]
        frames = tuple(Frame(f["data"], float(f.get("delay", 0.0)), f.get("event")) for f in stream["frames"])
        media = content_type or _documented_media(api, operation_id, status)
        form = stream.get("format") or ("sse" if media and media.startswith("text/event-stream") else "ndjson")
        answer = Answer(
            status,
            headers,
            media,
            frames=frames,
            stream_format=form,
            done=bool(stream.get("done", True)),
            stall=bool(stream.get("stall", False)),
            delay=delay,
            invalid=invalid,
        )
        if not invalid:
            _check_answer(where, api, operation_id, status, content_type, None, frames)
        return answer
    if "body_base64" in raw:
        try:
            data = base64.b64decode(raw["body_base64"], validate=True)
        except (binascii.Error, ValueError):
            raise StubError(f"{where}.body_base64: not base64") from None
        if not invalid:
            _check_answer(where, api, operation_id, status, content_type, None, None)
        return Answer(status, headers, content_type, delay=delay, invalid=invalid, raw=data, encoding=encoding)
    has_body = "body" in raw
    answer = Answer(
        status, headers, content_type, raw.get("body"), has_body, delay=delay, invalid=invalid, encoding=encoding
    )
    if not invalid:
        _check_answer(where, api, operation_id, status, content_type, raw.get("body") if has_body else None, None)
    return answer


def _documented_media(api: ProtocolApi, operation_id: str, status: int) -> str | None:
    response = _response(api, operation_id, status)
    content = (response or {}).get("content") or {}
    return next(iter(content), None)


def _response(api: ProtocolApi, operation_id: str, status: int) -> Mapping[str, Any] | None:
    return api.spec.response(operation_id, status)


def check_body(where: str, api: ProtocolApi, operation_id: str, body: Any, status: int = 200) -> None:
    """What a data stub makes an operation answer, against the document (a StubError naming the path)."""
    _check_answer(where, api, operation_id, status, None, body, None, body_at=where)


def check_error(where: str, api: ProtocolApi, operation_id: str, error: ApiError) -> None:
    """An error a data stub makes an operation answer: documented for it, in the protocol's shape."""
    _check_answer(where, api, operation_id, error.status, None, api.errors.body(error), None, True, where)


def _check_answer(
    where: str,
    api: ProtocolApi,
    operation_id: str,
    status: int,
    content_type: str | None,
    body: Any,
    frames: tuple[Frame, ...] | None,
    error: bool = False,
    body_at: str | None = None,
) -> None:
    """The answer against the operation's documented responses; a StubError naming the path."""
    response = _response(api, operation_id, status)
    status_at = f"{where}.error.status" if error else f"{where}.status"
    if response is None:
        documented = ", ".join(map(str, api.spec.operation(operation_id).definition.get("responses") or {}))
        raise StubError(f"{status_at}: {operation_id} documents no {status} answer (it documents {documented})")
    content = response.get("content") or {}
    if not content:
        if (body is not None or frames) and not error:  # an error speaks the protocol's shape regardless
            raise StubError(f"{where}: {operation_id}'s {status} answer has no body in the document")
        return
    media = content_type or next(iter(content))
    base = media.split(";", 1)[0].strip()
    if base not in content:
        raise StubError(f"{where}.content_type: {operation_id} answers {status} as {', '.join(content)}, not {media}")
    definition = content[base]
    if frames is not None:
        frame_schema = _frame_schema(api, definition)
        if frame_schema is None:
            raise StubError(f"{where}.stream: {operation_id}'s {status} answer is not a stream of JSON frames")
        for i, frame in enumerate(frames):
            if frame.event is not None:  # the document describes the default (message) events' data only
                continue
            for violation in api.schemas.violations(frame_schema, frame.data, limit=1):
                raise StubError(f"{where}.stream.frames[{i}].data{violation.path}: {violation.message}")
        return
    if body is None:
        return
    body_schema = definition.get("schema")
    if not _is_json(base):
        if not isinstance(body, str):
            raise StubError(f"{where}.body: {base} is sent as text: give a string")
        return
    if body_schema is not None:
        at = body_at if body_at is not None else f"{where}.error" if error else f"{where}.body"
        for violation in api.schemas.violations(body_schema, body, limit=1):
            raise StubError(f"{at}{violation.path}: {violation.message}")


def _frame_schema(api: ProtocolApi, definition: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The schema of one frame's JSON: an SSE event's ``data`` content schema (``itemSchema``), or
    the media type's schema where each line is one such JSON value (NDJSON served as JSON)."""
    item = definition.get("itemSchema")
    if item is None:
        found: Mapping[str, Any] | None = definition.get("schema")
        return found
    item = api.spec.resolve(item)
    data = (item.get("properties") or {}).get("data")
    if isinstance(data, Mapping):
        for option in (data, *(data.get("anyOf") or ()), *(data.get("oneOf") or ())):
            if isinstance(option, Mapping) and "contentSchema" in option:
                content_schema: Mapping[str, Any] = option["contentSchema"]
                return content_schema
    return None


# -- the registry -------------------------------------------------------------------------------

DataReader = Any
"""A protocol's data-stub reader (its descriptor's ``stubs``): ``read(where, raw, api) -> data``."""


class Stubs:
    """The stubs in force, in order, and each protocol's data stubs."""

    def __init__(self, apis: Mapping[str, ProtocolApi], readers: Mapping[str, DataReader | None]) -> None:
        self.apis = apis
        self.readers = readers
        self.order: list[Stub] = []
        self.data: dict[str, Any] = {}
        """Each protocol's data stubs as given (the listing shows them)."""

    def __len__(self) -> int:
        return len(self.order)

    # -- documents ------------------------------------------------------------------------
    def load(self, document: Any) -> None:
        """Replace every stub and every data stub with the document's; a bad one changes nothing."""
        check_schema("", document)
        stubs = self._parse_all(document.get("stubs") or [])
        data = self._read_data(document.get("data") or {})
        self.order = stubs
        self.data = dict(document.get("data") or {})
        for pid, parsed in data.items():
            handlers = self.apis[pid].handlers
            if handlers is not None:
                handlers.data = parsed
        self._publish()

    def _parse_all(self, raw: list[Any]) -> list[Stub]:
        stubs: list[Stub] = []
        seen: set[str] = set()
        for i, item in enumerate(raw):
            stub = parse_stub(f"stubs[{i}]", item, self.apis)
            if stub.id in seen:
                raise StubError(f"stubs[{i}].id: {stub.id!r} is already in use")
            seen.add(stub.id)
            stubs.append(stub)
        return stubs

    def _read_data(self, raw: Mapping[str, Any]) -> dict[str, Any]:
        """Every served protocol's data stubs (empty where the document gives none)."""
        for pid in raw:
            if pid not in self.apis:
                raise StubError(f"data.{pid}: not served here; served: {', '.join(sorted(self.apis))}")
            if self.readers.get(pid) is None:
                raise StubError(f"data.{pid}: {pid} takes no data stubs")
        out = {}
        for pid, reader in self.readers.items():
            if reader is not None and pid in self.apis:
                try:
                    out[pid] = reader(f"data.{pid}", raw.get(pid) or {}, self.apis[pid])
                except FixtureError as exc:  # the readers share the fixtures' checks
                    raise StubError(str(exc)) from None
        return out

    def view(self) -> dict[str, Any]:
        return {"stubs": [s.view() for s in self.order], "data": self.data}

    # -- one stub -------------------------------------------------------------------------
    def add(self, raw: Any) -> Stub:
        if len(self.order) >= MAX_STUBS:
            raise StubError(f"stubs: at most {MAX_STUBS}")
        stub = parse_stub("stub", raw, self.apis)
        if self.find(stub.id) is not None:
            raise StubError(f"stub.id: {stub.id!r} is already in use")
        self.order.append(stub)
        self._publish()
        return stub

    def find(self, stub_id: str) -> Stub | None:
        return next((s for s in self.order if s.id == stub_id), None)

    def replace(self, stub_id: str, raw: Any) -> Stub:
        """The stub ``stub_id`` replaced in its place (its hits start again)."""
        index = next(i for i, s in enumerate(self.order) if s.id == stub_id)
        stub = parse_stub("stub", {**raw, "id": stub_id} if isinstance(raw, dict) else raw, self.apis)
        self.order[index] = stub
        self._publish()
        return stub

    def delete(self, stub_id: str) -> None:
        self.order = [s for s in self.order if s.id != stub_id]
        self._publish()

    def reset_hits(self, protocol_id: str | None = None) -> None:
        for stub in self.order:
            if protocol_id in (None, stub.protocol):
                stub.hits = 0

    def _publish(self) -> None:
        """Fill each operation's lists in place: the endpoints hold these very lists."""
        wanted: dict[tuple[str, str, bool], list[Stub]] = {}
        for stub in self.order:
            wanted.setdefault((stub.protocol, stub.operation, stub.before_validation), []).append(stub)
        for pid, api in self.apis.items():
            for operation_id, slot in api.stub_slots.items():
                slot.fill(wanted.get((pid, operation_id, False), []))
            for operation_id, slot in api.early_stub_slots.items():
                slot.fill(wanted.get((pid, operation_id, True), []))
