"""Record: the mock as a proxy in front of a real server of the protocol, writing what it saw as
stubs the mock then serves (``python -m mockserver --record URL --record-to FILE``, then
``--stubs FILE``).

Every request is routed as the mock routes it (so each exchange is named by its protocol,
operation and path parameters), forwarded to ``URL`` + its path and query, and the answer passed
back as it arrives, streams frame by frame. Each exchange becomes one stub, in order:

- matched before validation (``before_validation``: the recording answers invalid requests as the
  real server did), by operation, path parameters and query, answering once (``times: 1``), so
  the same calls in the same order get the same answers, ids and timestamps included; the last
  answer of a call answers every repeat of it;
- answered with the recorded status, content type, protocol headers and body (NDJSON lines and SSE
  events as frames, each with the delay it came after; bytes as base64);
- checked against the document like any stub; an answer the real server gave off the document is
  kept, marked ``invalid: true``, with what is wrong in its ``description``.

Credentials are never written: no request header is kept, credential-like query parameters are
left out of the matchers, and only content and protocol headers of answers are kept (no cookies).
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import re
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import aiohttp
from aiohttp import web

from .api import ProtocolApi
from .errors import ApiError
from .matching import MISSING
from .stubs import MAX_DELAY, StubError, json_operation, parse_stub

Endpoint = Callable[[web.Request], Awaitable[web.StreamResponse]]
HOP_BY_HOP = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
        "host",
        "content-length",
        "accept-encoding",  # asked as identity: what is passed on is what is recorded
    }
)
KEPT_HEADERS = frozenset(
    {"content-disposition", "location", "retry-after", "www-authenticate", "etag", "cache-control"}
)
"""Answer headers a stub keeps besides the content type (and X-* protocol headers)."""
CREDENTIAL = re.compile(r"auth|token|secret|password|passwd|api[-_]?key|^key$|cookie|signature|^sig$|^code$", re.I)
"""Names of headers and query parameters never written (a recording is made to be shared)."""
EXCHANGE_TIMEOUT = aiohttp.ClientTimeout(total=600, connect=10, sock_read=300)
REST_S = 2.0
"""How long the rest of an answer is awaited once its client left, or once the mock was told to
stop: a server's answer is what it sent, not what its client read (an openai client closes a
stream at its [DONE])."""


@dataclass(slots=True)
class Recorded:
    protocol: str
    operation: str
    method: str
    path: str
    path_params: dict[str, str]
    query: dict[str, str]
    request_body: Any = MISSING
    """The request's JSON body (None: no body), matched by the stub; NOT_JSON: a body that is not
    JSON, matched as such; MISSING: not matched (not a JSON operation, or a credential in it)."""
    status: int = 0
    """The upstream's status, once its headers arrived (0 before)."""
    whole: bool = False
    """The server's answer was all received: its Content-Length reached (before its last bytes are
    passed on: a client that has its answer may stop the mock at once) or its end read."""
    content_type: str = ""
    headers: dict[str, str] = field(default_factory=dict)
    chunks: list[tuple[float, bytes]] = field(default_factory=list)
    """Each piece of the answer's body with the seconds after the headers it arrived."""
    stalled: bool = False
    """The server was still streaming when the client left, or when the mock stopped: the stub
    stalls after its frames."""

    length: int | None = None
    """The answer's Content-Length; None for one sent in chunks (as every stream is)."""

    @property
    def answered(self) -> bool:
        """A stub can say it: the whole answer, or the frames of a stream that went on (an answer
        of a fixed length cut short is no stream: a replay could not say it)."""
        return self.whole or (self.stalled and self.length is None and self.stream_format() is not None)

    streaming: bool = False
    """The protocol's manifest names the operation as one that streams (NeuroSan's chat streams
    JSON lines as application/json)."""

    def stream_format(self) -> str | None:
        media = self.content_type.split(";", 1)[0].strip().lower()
        if media == "text/event-stream":
            return "sse"
        if "ndjson" in media or "json-lines" in media or "jsonl" in media:
            return "ndjson"
        return "ndjson" if self.streaming and "json" in media else None

    @property
    def body(self) -> bytes:
        return b"".join(chunk for _, chunk in self.chunks)

    def key(self) -> str | None:
        """Exchanges of one key answer the same request; None: this one answers any body (its last
        answer must not repeat for other requests)."""
        if self.request_body is MISSING:
            return None
        body = "not JSON" if self.request_body is NOT_JSON else ["body", self.request_body]
        return json.dumps([self.protocol, self.operation, self.path_params, self.query, body], sort_keys=True)

    def stub(self, number: int, last: bool) -> dict[str, Any]:
        request: dict[str, Any] = {"protocol": self.protocol, "operation": self.operation}
        if self.path_params:
            request["path"] = dict(self.path_params)
        if self.query:
            request["query"] = dict(self.query)
        if self.request_body is NOT_JSON:
            request["body"] = [{"pointer": "", "present": False}]
        elif self.request_body is not MISSING:
            request["body"] = [{"pointer": "", "equals": self.request_body}]
        out: dict[str, Any] = {
            "id": f"recorded-{number:05d}",
            "description": f"recorded: {self.method} {self.path} -> {self.status}",
            "before_validation": True,
            "request": request,
        }
        if not last:
            out["times"] = 1
        out["response"] = self.answer()
        return out

    def answer(self) -> dict[str, Any]:
        response: dict[str, Any] = {"status": self.status}
        if self.headers:
            response["headers"] = dict(self.headers)
        body = self.body
        if self.content_type:  # an empty download keeps its type too (a JSON default would replace it)
            response["content_type"] = self.content_type
        if not body and not self.stalled:
            return response
        media = self.content_type.split(";", 1)[0].strip().lower()
        if media == "text/event-stream":
            frames, done = _sse_frames(self.chunks)
            if frames is not None:
                response["stream"] = {"format": "sse", "frames": frames, "done": done}
                if self.stalled:
                    response["stream"]["stall"] = True
                return response
        elif media == "application/json" or media.endswith("+json") or "ndjson" in media or "json-lines" in media:
            # JSON lines, each ended by a newline (a stream, one frame or more); else one JSON body
            frames = _ndjson_frames(self.chunks) if body.endswith(b"\n") or self.stalled else None
            if frames is not None or self.stalled:
                response["stream"] = {"format": "ndjson", "frames": frames or []}
                if self.stalled:
                    response["stream"]["stall"] = True
                return response
            try:
                response["body"] = json.loads(body)
                return response
            except ValueError:
                pass
        elif media.startswith("text/"):
            try:
                response["body"] = body.decode("utf-8")
                return response
            except UnicodeDecodeError:
                pass
        response["body_base64"] = base64.b64encode(body).decode("ascii")
        return response


def _delay(seconds: float) -> float:
    return round(min(max(seconds, 0.0), MAX_DELAY), 3)


def _timed_parts(chunks: list[tuple[float, bytes]], separator: bytes) -> list[tuple[float, bytes]]:
    """The body cut at ``separator``, each part with the time its last byte arrived."""
    parts: list[tuple[float, bytes]] = []
    buffer = b""
    for at, chunk in chunks:
        buffer += chunk
        while separator in buffer:
            part, buffer = buffer.split(separator, 1)
            parts.append((at, part))
    if buffer.strip():
        parts.append((chunks[-1][0] if chunks else 0.0, buffer))
    return parts


def _sse_frames(chunks: list[tuple[float, bytes]]) -> tuple[list[dict[str, Any]] | None, bool]:
    normalized = [(at, chunk.replace(b"\r\n", b"\n")) for at, chunk in chunks]
    frames: list[dict[str, Any]] = []
    done = False
    previous = 0.0
    for at, event in _timed_parts(normalized, b"\n\n"):
        lines = [line[5:].lstrip() for line in event.split(b"\n") if line.startswith(b"data:")]
        if not lines:
            continue  # a comment or a keep-alive
        data = b"\n".join(lines)
        if data == b"[DONE]":
            done = True
            continue
        try:
            frames.append({"data": json.loads(data), "delay": _delay(at - previous)})
        except ValueError:
            return None, False  # an event that is not JSON: a stub cannot say it, the bytes are kept
        previous = at
    return frames, done


def _ndjson_frames(chunks: list[tuple[float, bytes]]) -> list[dict[str, Any]] | None:
    frames: list[dict[str, Any]] = []
    previous = 0.0
    for at, line in _timed_parts(chunks, b"\n"):
        if not line.strip():
            continue
        try:
            frames.append({"data": json.loads(line), "delay": _delay(at - previous)})
        except ValueError:
            return None
        previous = at
    return frames or None


class Recorder:
    """Forwards every request to ``upstream`` and keeps each exchange of a named operation."""

    def __init__(self, upstream: str) -> None:
        self.upstream = upstream.rstrip("/")
        self.exchanges: list[Recorded] = []
        """In the order the requests arrived: the order a replay consumes them in."""
        self._session: aiohttp.ClientSession | None = None
        self._under_way: dict[asyncio.Task[Any], Recorded] = {}

    async def close(self, app: web.Application | None = None) -> None:
        if self._session is not None:
            await self._session.close()

    def endpoint(self, api: ProtocolApi, operation_id: str | None) -> Endpoint:
        async def forward(request: web.Request) -> web.StreamResponse:
            return await self.forward(request, api, operation_id)

        return forward

    async def forward(self, request: web.Request, api: ProtocolApi, operation_id: str | None) -> web.StreamResponse:
        if self._session is None:
            self._session = aiohttp.ClientSession(timeout=EXCHANGE_TIMEOUT, auto_decompress=False)
        body = await request.read()
        headers = {k: v for k, v in request.headers.items() if k.lower() not in HOP_BY_HOP}
        headers["Accept-Encoding"] = "identity"
        url = self.upstream + request.path_qs
        recorded = Recorded(
            api.protocol_id,
            operation_id or "",
            request.method,
            request.path,
            dict(request.match_info) if operation_id else {},
            {k: v for k, v in request.query.items() if not CREDENTIAL.search(k)},
            _matched_body(api, operation_id, body),
            streaming=operation_id in api.spec.info.streaming_operations,
        )
        if operation_id is not None:
            self.exchanges.append(recorded)  # written once answered (``answered``)
        task = asyncio.current_task()
        if task is not None:
            self._under_way[task] = recorded
        try:
            return await self._relay(request, api, url, headers, body, recorded)
        finally:
            if task is not None:
                self._under_way.pop(task, None)

    async def _relay(
        self,
        request: web.Request,
        api: ProtocolApi,
        url: str,
        headers: dict[str, str],
        body: bytes,
        recorded: Recorded,
    ) -> web.StreamResponse:
        assert self._session is not None
        loop = asyncio.get_running_loop()
        response: web.StreamResponse | None = None
        try:
            async with self._session.request(
                request.method, url, headers=headers, data=body or None, allow_redirects=False
            ) as upstream:
                passed = {
                    k: v for k, v in upstream.headers.items() if k.lower() not in HOP_BY_HOP and k.lower() != "date"
                }
                response = web.StreamResponse(status=upstream.status, reason=upstream.reason, headers=passed)
                length = upstream.content_length
                if length is not None:
                    response.content_length = length
                recorded.status, recorded.length = upstream.status, length
                recorded.content_type = upstream.headers.get("Content-Type", "")
                recorded.headers = _kept(upstream.headers)
                recorded.whole = length == 0 or request.method == "HEAD" or upstream.status in (204, 304)
                await response.prepare(request)
                started = loop.time()
                received = 0
                try:
                    while chunk := await _read_while_heard(upstream, request):
                        recorded.chunks.append((loop.time() - started, chunk))
                        received += len(chunk)
                        if length is not None and received >= length:
                            recorded.whole = True  # before the client has it: it may stop the mock next
                        try:
                            await response.write(chunk)
                        except ConnectionResetError:
                            raise ClientLeft from None
                except ClientLeft as left:
                    if recorded.whole or await _rest(upstream, recorded, started, left.reading):
                        recorded.whole = True  # the server ended its answer soon after
                        raise
                    # the server was still streaming when the client gave up: a stream that stalls
                    # after what it sent (a replay holds it open the same way), if it was a stream
                    recorded.stalled = True
                    raise ClientLeft from None
                # the server's answer is whole: it is recorded whatever the client does now (an
                # openai client closes a stream at its [DONE], before the server's last chunk)
                recorded.whole = True
                with contextlib.suppress(ConnectionResetError):
                    await response.write_eof()
        except (TimeoutError, aiohttp.ClientError) as exc:
            if response is not None:  # the answer broke off midway: the client sees it end
                raise ConnectionResetError(f"the recorded server broke off: {exc}") from exc
            return api.errors.response(ApiError(502, f"the recorded server {self.upstream} did not answer: {exc}"))
        return response

    async def settle(self, within: float | None = None) -> None:
        """Before the recording is written at a stop: the exchanges under way get ``within``
        seconds (REST_S) to end (the mock no longer listens); a stream still going then is kept as
        one that stalls after what it sent, as when its client leaves."""
        under_way = set(self._under_way)
        if under_way:
            await asyncio.wait(under_way, timeout=REST_S if within is None else within)
        for recorded in self._under_way.values():
            if not recorded.whole and recorded.chunks:
                recorded.stalled = True

    def document(self, apis: Mapping[str, ProtocolApi]) -> dict[str, Any]:
        """The exchanges so far as a stubs document (stubs.py), each answer checked."""
        answered = [ex for ex in self.exchanges if ex.answered]  # not those that broke off or are under way
        last = {ex.key(): i for i, ex in enumerate(answered)}
        stubs = []
        for i, exchange in enumerate(answered):
            key = exchange.key()
            stub = exchange.stub(i + 1, key is not None and last[key] == i)
            try:
                parse_stub(stub["id"], stub, apis)
            except StubError as exc:
                stub["response"]["invalid"] = True  # kept as the real server gave it
                stub["description"] += f"; off the document: {exc}"
            stubs.append(stub)
        return {"stubs": stubs}


NOT_JSON: Any = object()
"""A request body that does not parse as JSON (a stub matches it by ``present: false``)."""
BODY_CREDENTIALS = frozenset(
    {"password", "passwd", "secret", "client_secret", "api_key", "apikey", "access_token", "refresh_token",
     "id_token", "authorization", "auth", "token", "credentials"}
)  # fmt: skip
"""Keys of a request body that mark it as carrying a credential: such a body is not written (the
stub then matches by order alone)."""


def _matched_body(api: ProtocolApi, operation_id: str | None, body: bytes) -> Any:
    """What a stub of this exchange matches the body by: the JSON as sent, for an operation whose
    body is JSON; MISSING (order alone) for other bodies and for one that carries a credential."""
    if operation_id is None or not json_operation(api, operation_id):
        return MISSING
    if not body:
        return None
    try:
        data = json.loads(body)
    except (ValueError, RecursionError):
        return NOT_JSON
    return MISSING if _has_credential(data) else data


def _has_credential(node: Any) -> bool:
    if isinstance(node, dict):
        return any(str(k).lower() in BODY_CREDENTIALS or _has_credential(v) for k, v in node.items())
    if isinstance(node, list):
        return any(_has_credential(item) for item in node)
    return False


class ClientLeft(Exception):
    """The client closed its connection while the recorded server's answer was still coming."""

    def __init__(self, reading: asyncio.Future[bytes] | None = None) -> None:
        super().__init__()
        self.reading = reading
        """The read of the answer under way when the client left (its owner now)."""


LISTEN_POLL = 0.5
"""How often a wait for the recorded server's next bytes looks whether the client is still there."""


async def _read_while_heard(upstream: aiohttp.ClientResponse, request: web.Request) -> bytes:
    """The next bytes of the answer (b"" at its end); a client that left ends the exchange, or a
    stream that never ends would hold both connections until the read timeout."""
    pending = asyncio.ensure_future(upstream.content.readany())
    handed = False
    try:
        while True:
            done, _ = await asyncio.wait({pending}, timeout=LISTEN_POLL)
            if done:
                return pending.result()
            if request.transport is None or request.transport.is_closing():
                handed = True  # the read goes on: the rest of the answer may follow
                raise ClientLeft(pending)
    finally:
        if not handed and not pending.done():
            pending.cancel()


async def _rest(
    upstream: aiohttp.ClientResponse, recorded: Recorded, started: float, reading: asyncio.Future[bytes] | None
) -> bool:
    """Read the rest of an answer whose client left (``reading``: the read under way when it left);
    True if the server ended it within REST_S."""
    loop = asyncio.get_running_loop()
    try:
        async with asyncio.timeout(REST_S):
            chunk = await reading if reading is not None else await upstream.content.readany()
            while chunk:
                recorded.chunks.append((loop.time() - started, chunk))
                chunk = await upstream.content.readany()
    except (TimeoutError, aiohttp.ClientError):
        return False
    finally:
        if reading is not None and not reading.done():
            reading.cancel()
    return True


def _kept(headers: Mapping[str, str]) -> dict[str, str]:
    kept = {}
    for name, value in headers.items():
        lower = name.lower()
        if lower in KEPT_HEADERS or (lower.startswith("x-") and not CREDENTIAL.search(lower)):
            kept[str(name)] = str(value)
    return kept
