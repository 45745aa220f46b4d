"""The suite's HTTP client: bounded in time and bytes, and recording every exchange as evidence.

Every call ends within ``timeout`` seconds (connect, each read, and the whole exchange), never
reads more than ``max_body_bytes``, and turns transport failures into ``TargetError`` with a
sentence a vendor can act on.
"""

from __future__ import annotations

import json
import ssl
import time
from collections.abc import Iterator, Mapping
from contextlib import closing, contextmanager
from dataclasses import dataclass, replace
from functools import cache
from typing import Any, NoReturn

import httpx

from ..verdicts.results import CheckFailed, Exchange
from .answer import readable
from .curl import curl_command
from .guard import STALLS_PER_ROUTE, StallGuard
from .judgments import Seen
from .shown import body as shown_body

EVIDENCE_BODY_CHARS = 4000
"""An answer's body is kept as evidence up to here (its start shows what it was)."""
REQUEST_EVIDENCE_CHARS = 1 << 20
"""A request's body is kept whole up to here: a finding's reproduction sends it again (the suite
made it, so it is bounded: the edge corpus's longest value is 64 Ki characters)."""


class TargetError(Exception):
    """The target failed at the transport level: unreachable, stalled, reset, oversized.
    ``stalled``: the exchange cost its bound (a timeout, the stream budget, the byte cap)."""

    def __init__(self, message: str, unreachable: bool = False, *, stalled: bool = False) -> None:
        super().__init__(message)
        self.unreachable = unreachable
        self.stalled = stalled
        self.told = False
        """Whether the run's guard heard of it (a stream tells it where it breaks)."""


def _tell(guard: StallGuard | None, route: str, error: TargetError) -> None:
    """Tell the run's guard an exchange got no whole answer (once per error)."""
    if guard is None or error.told:
        return
    error.told = True
    if error.stalled:
        guard.stalled(route, str(error))
    else:
        guard.unanswered(route, str(error))


@dataclass(frozen=True, slots=True)
class Limits:
    timeout: float = 10.0
    """Seconds for connect, for each read, and for a whole non-streaming exchange."""
    max_body_bytes: int = 8 << 20
    stream_seconds: float = 30.0
    """Whole-stream budget for streaming responses, and the bound of every other wait for the
    server's progress (a job's result, an agent's research: ``waiting.progress_bound``)."""
    max_frames: int = 10_000


@dataclass(frozen=True, slots=True)
class _Bound:
    """One exchange's bounds: the client's, or shorter for a route that stalled twice already."""

    limits: Limits
    route: str
    """Its route, as the run's guard names it ("" without a guard)."""
    note: str = ""
    """Said after a stall met within shortened bounds."""

    def stall(self, message: str) -> TargetError:
        return TargetError(message + self.note, stalled=True)


@dataclass(slots=True)
class Response:
    status: int
    headers: httpx.Headers
    body: bytes
    exchange: Exchange

    @property
    def content_type(self) -> str:
        return str(self.headers.get("content-type", "")).split(";", 1)[0].strip().lower()

    def seen(self) -> Seen:
        """This exchange as a judgment reads it (``check/judgments``)."""
        return Seen(self.exchange.method, self.exchange.url, self.status, dict(self.headers), self.body)

    def json(self) -> Any:
        """The body's JSON as a check reads it (``answer.readable``): a read the answer cannot
        satisfy (a missing key, an index past the end, a string read as an object) fails the check
        with this answer as the evidence, never as a suite error."""
        try:
            value = json.loads(self.body)
        except (ValueError, UnicodeDecodeError) as exc:
            message = f"response body is not valid JSON ({exc}); got {self.shown(300)}"
            raise CheckFailed(message, shown_by=self.exchange) from None
        return readable(value, self.exchange)

    def json_value(self) -> Any:
        """The body's JSON whatever its label says (the label is the content-type requirement's
        fact: a JSON body labelled otherwise, or not at all, still holds its facts), or None when
        a body labelled otherwise is no JSON. A body labelled JSON that does not parse fails as
        ``json`` fails it: it names what the server sent, not a missing member."""
        if self.content_type == "application/json" or self.content_type.endswith("+json"):
            return self.json()
        try:
            value = json.loads(self.body)
        except (ValueError, UnicodeDecodeError):
            return None
        return readable(value, self.exchange)

    @property
    def text(self) -> str:
        return self.body.decode("utf-8", "replace")

    def shown(self, limit: int = 200) -> str:
        """The body as a message quotes it: JSON as JSON, an HTML page by its one useful line."""
        return shown_body(self.body, self.content_type, limit)


def _preview(body: bytes | str | None, limit: int = EVIDENCE_BODY_CHARS) -> str | None:
    if body is None:
        return None
    text = body.decode("utf-8", "replace") if isinstance(body, bytes) else body
    return text if len(text) <= limit else text[:limit] + f"... [{len(text) - limit} more characters]"


def request_preview(body: bytes | str | None) -> str | None:
    """A request body as evidence: whole, unless it is past ``REQUEST_EVIDENCE_CHARS``."""
    return _preview(body, REQUEST_EVIDENCE_CHARS)


def _raw_chunks(resp: httpx.Response) -> Iterator[bytes]:
    """The body as sent, chunk by chunk; in one piece when a transport (e.g. httpx.MockTransport
    with ``content=``/``json=``) handed over a response that is already read."""
    try:
        content = resp.content
    except httpx.ResponseNotRead:
        yield from resp.iter_raw()
    else:
        if content:
            yield content


def _describe(exc: httpx.HTTPError, url: str, timeout: float) -> TargetError:
    if isinstance(exc, httpx.ConnectError):
        return TargetError(f"cannot connect to {url}: {exc}", unreachable=True)
    if isinstance(exc, httpx.ConnectTimeout):
        return TargetError(f"connecting to {url} timed out after {timeout:g} s", unreachable=True, stalled=True)
    if isinstance(exc, httpx.ReadTimeout):
        return TargetError(f"{url} sent nothing for {timeout:g} s (stalled)", stalled=True)
    if isinstance(exc, httpx.TimeoutException):  # a write or the pool: the bound was paid all the same
        return TargetError(f"{url}: {type(exc).__name__} after {timeout:g} s", stalled=True)
    if isinstance(exc, httpx.RemoteProtocolError):
        return TargetError(f"{url} broke the HTTP exchange: {exc or 'connection closed or reset'}")
    if isinstance(exc, httpx.ReadError | httpx.WriteError):
        return TargetError(f"{url}: connection reset ({exc or type(exc).__name__})")
    return TargetError(f"{url}: {type(exc).__name__}: {exc}")


GAP_S = 0.002
"""The least time between the end of one call and the start of the next, in this process: two
things the suite did are never stamped by a server with the same millisecond by chance, so a
replay can tell a modifiedOn that did not move from one that moved fast (``check/script.py``)."""
_ended = [0.0]


def _spaced() -> None:
    wait = _ended[0] + GAP_S - time.monotonic()
    if wait > 0:
        time.sleep(wait)


@cache
def tls_context() -> ssl.SSLContext:
    """One TLS context for every client of the process (``httpx.Client(verify=tls_context())``).
    httpx builds a fresh one per client by default, loading the whole CA bundle each time (20 to
    50 ms of CPU, 150 ms on a busy machine), and a run makes a client per check: that was the
    largest cost of a scenario phase; replay makes one per call of ``replay``."""
    return httpx.create_ssl_context()


class Client:
    """Synchronous, bounded, evidence-recording. One per check; exchanges land in ``self.log``.

    With the run's ``guard`` (check/guard.py), a request to a route that stalled twice, or to a
    target that stopped answering, is not sent (``TargetError`` at once, the exchange recorded with
    why), and every exchange tells the guard how it ended."""

    def __init__(
        self,
        base_url: str,
        limits: Limits,
        headers: Mapping[str, str] | None = None,
        transport: httpx.BaseTransport | None = None,
        guard: StallGuard | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.limits = limits
        self.default_headers = dict(headers or {})
        self.log: list[Exchange] = []
        self.guard = guard
        t = limits.timeout
        self._http = httpx.Client(
            timeout=httpx.Timeout(t, connect=t, read=t, write=t, pool=t),
            follow_redirects=False,
            transport=transport,
            verify=tls_context(),
            # identity: bodies are capped and parsed as sent; a compressed answer would read as garbage
            headers={"User-Agent": "agent-api-conformance", "Accept-Encoding": "identity"},
        )

    def close(self) -> None:
        self._http.close()

    def _build(
        self, method: str, path: str, headers: Mapping[str, str] | None, auth: str | None, **kwargs: Any
    ) -> httpx.Request:
        merged = {**self.default_headers, **(headers or {})}
        if auth is not None:  # "" sends no Authorization header at all
            merged.pop("Authorization", None)
            if auth:
                merged["Authorization"] = f"Bearer {auth}"
        return self._http.build_request(method, self.base_url + path, headers=merged, **kwargs)

    def _record(self, request: httpx.Request, stream: bool) -> Exchange:
        raw = request.read()  # bodies here are small and in memory; multipart included
        body = request_preview(raw) if raw else None
        headers = dict(request.headers)
        exchange = Exchange(request.method, str(request.url), headers, body)
        exchange.curl = curl_command(request.method, str(request.url), headers, raw, stream=stream)
        exchange.record_body(raw)
        self.log.append(exchange)
        return exchange

    def request(
        self,
        method: str,
        path: str,
        *,
        headers: Mapping[str, str] | None = None,
        auth: str | None = None,
        **kwargs: Any,
    ) -> Response:
        """``kwargs`` are httpx's: json=, content=, files=, data=, params=."""
        with self._open(method, path, headers, auth, kwargs, False) as (resp, exchange, started, bound):
            url = str(resp.request.url)
            cap = bound.limits.max_body_bytes
            announced = resp.headers.get("content-length", "")
            if announced.isdigit() and int(announced) > cap:
                raise TargetError(
                    f"{url}: response body of {announced} bytes (Content-Length) exceeds the {cap}-byte cap",
                    stalled=True,
                )
            timeout = bound.limits.timeout
            deadline = started + timeout
            chunks: list[bytes] = []
            size = 0
            try:
                for chunk in _raw_chunks(resp):
                    size += len(chunk)
                    if size > cap:
                        raise TargetError(f"{url}: response body exceeds the {cap}-byte cap", stalled=True)
                    if time.monotonic() > deadline:
                        raise bound.stall(f"{url}: response not complete after {timeout:g} s (trickling)")
                    chunks.append(chunk)
            except httpx.ReadTimeout:  # headers arrived, then the body stopped
                raise bound.stall(
                    f"{url} stalled mid-body: HTTP {resp.status_code} and {size} body bytes, "
                    f"then nothing for {timeout:g} s"
                ) from None
            body = b"".join(chunks)
            if self.guard is not None:
                self.guard.complete(bound.route)
                self.guard.tap.answered(method, url, resp.status_code, body)
        exchange.response_body = _preview(body)
        exchange.record_answer(body)
        return Response(resp.status_code, resp.headers, body, exchange)

    @contextmanager
    def _open(
        self,
        method: str,
        path: str,
        headers: Mapping[str, str] | None,
        auth: str | None,
        kwargs: dict[str, Any],
        stream: bool,
    ) -> Iterator[tuple[httpx.Response, Exchange, float, _Bound]]:
        """Send, record the exchange as evidence, and turn every transport failure into TargetError
        (told to the run's guard, which may refuse the request, or shorten its wait)."""
        request = self._build(method, path, headers, auth, **kwargs)
        exchange = self._record(request, stream)
        _spaced()
        exchange.started = round(time.time(), 3)
        bound = self._bound(request, exchange)
        started = time.monotonic()
        try:
            with closing(self._http.send(request, stream=True)) as resp:
                exchange.status = resp.status_code
                exchange.response_headers = dict(resp.headers)
                yield resp, exchange, started, bound
        except httpx.HTTPError as exc:
            error = _describe(exc, str(request.url), bound.limits.timeout)
            if error.stalled and bound.note:
                error = TargetError(f"{error}{bound.note}", error.unreachable, stalled=True)
            exchange.error = str(error)
            _tell(self.guard, bound.route, error)
            raise error from None
        except TargetError as error:
            exchange.error = str(error)
            _tell(self.guard, bound.route, error)
            raise
        finally:
            exchange.elapsed_ms = round((time.monotonic() - started) * 1000, 1)
            _ended[0] = time.monotonic()
            if self.guard is not None:  # sent: what the run exercised of the document (check/coverage.py)
                self.guard.tap.saw(method, str(request.url), exchange.status, request.headers.keys(), request.content)

    def _bound(self, request: httpx.Request, exchange: Exchange) -> _Bound:
        """The exchange's bounds, as the run's guard sees its route: refused when the target stopped
        answering, waited on briefly when the route stalled twice already."""
        if self.guard is None:
            return _Bound(self.limits, "")
        route = self.guard.route(str(request.url))
        refusal = self.guard.refusal(route, generated=False)
        if refusal:
            exchange.error, exchange.elapsed_ms = refusal, 0.0
            raise TargetError(refusal)
        wait = self.guard.wait(route, self.limits.timeout)
        if wait >= self.limits.timeout:
            return _Bound(self.limits, route)
        request.extensions["timeout"] = httpx.Timeout(wait).as_dict()
        limits = replace(self.limits, timeout=wait, stream_seconds=min(wait, self.limits.stream_seconds))
        note = f" ({route} stalled {STALLS_PER_ROUTE} times before, so it was waited on {wait:g} s, not the timeout)"
        return _Bound(limits, route, note)

    def get(self, path: str, **kwargs: Any) -> Response:
        return self.request("GET", path, **kwargs)

    def post(self, path: str, **kwargs: Any) -> Response:
        return self.request("POST", path, **kwargs)

    def put(self, path: str, **kwargs: Any) -> Response:
        return self.request("PUT", path, **kwargs)

    def delete(self, path: str, **kwargs: Any) -> Response:
        return self.request("DELETE", path, **kwargs)

    @contextmanager
    def stream(
        self,
        method: str,
        path: str,
        *,
        headers: Mapping[str, str] | None = None,
        auth: str | None = None,
        **kwargs: Any,
    ) -> Iterator[StreamingResponse]:
        with self._open(method, path, headers, auth, kwargs, True) as (resp, exchange, started, bound):
            yield StreamingResponse(resp, exchange, bound.limits, started, self.guard, bound)


class StreamingResponse:
    """Chunks as they arrive, bounded by the stream budget and the byte cap; keeps a transcript."""

    def __init__(
        self,
        resp: httpx.Response,
        exchange: Exchange,
        limits: Limits,
        started: float,
        guard: StallGuard | None = None,
        bound: _Bound | None = None,
    ) -> None:
        self.status = resp.status_code
        self.headers = resp.headers
        self._resp = resp
        self._exchange = exchange
        self.exchange = exchange
        self._limits = limits
        self._deadline = started + limits.stream_seconds
        self._transcript = bytearray()
        self._guard = guard
        self._bound = bound or _Bound(limits, "")

    @property
    def content_type(self) -> str:
        return str(self.headers.get("content-type", "")).split(";", 1)[0].strip().lower()

    def chunks(self) -> Iterator[bytes]:
        size = 0
        try:
            for chunk in _raw_chunks(self._resp):
                size += len(chunk)
                if len(self._transcript) < EVIDENCE_BODY_CHARS:
                    self._transcript.extend(chunk[: EVIDENCE_BODY_CHARS - len(self._transcript)])
                kept = _preview(bytes(self._transcript)) or ""
                # a transcript cut short says so, as a whole answer's preview does (replay compares its start)
                self._exchange.response_body = kept + (
                    f"... [{size - len(self._transcript)} more characters]" if size > len(self._transcript) else ""
                )
                if size > self._limits.max_body_bytes:
                    raise TargetError(f"stream exceeds {self._limits.max_body_bytes} bytes", stalled=True)
                if time.monotonic() > self._deadline:
                    raise self._bound.stall(f"stream still open after {self._limits.stream_seconds:g} s")
                yield chunk
            self._exchange.stream_ended = True
            if self._guard is not None:
                self._guard.complete(self._bound.route)
        except httpx.ReadTimeout:
            self._fail(self._bound.stall(f"stream stalled: nothing received for {self._limits.timeout:g} s"))
        except httpx.HTTPError as exc:
            self._fail(TargetError(f"stream broke: {exc or type(exc).__name__}"))
        except TargetError as error:
            self._fail(error)

    def finished(self) -> None:
        """The stream's terminating event arrived: it ended, whatever the connection does next."""
        self._exchange.stream_ended = True
        if self._guard is not None:
            self._guard.complete(self._bound.route)

    def _fail(self, error: TargetError) -> NoReturn:
        """Tell the run's guard here: a check may catch the error before the client sees it."""
        _tell(self._guard, self._bound.route, error)
        raise error from None

    def read(self) -> bytes:
        return b"".join(self.chunks())
