"""The property-based phase's exchanges held to the suite's bounds, and told to the run's stall guard.

schemathesis bounds each exchange by a read timeout, and an event stream once the request timeout
has passed in total. That leaves a body trickling one byte a second (no single read times out), an
endless stream of another media type (NeuroSan's ``application/json-lines``), and an answer of any
size. While the phase runs, every exchange schemathesis makes goes through one wrapper (its probes
through ``requests.Session.send``, held to the same bounds), which:

- holds the whole exchange, body included, to ``timeout`` (an event stream to the suite's stream
  budget; it ends at the protocol's end event, as its client reads it, if it declares one: ends.py):
  the watchdog shuts down the exchange's sockets when it is late, or when the run stops;
- reads a non-stream body itself, at most ``max_bytes`` of it;
- tells the run's stall guard (check/guard.py) how each exchange ended: a timeout, a late exchange
  cut by the watchdog, an answer past the cap (an endless stream) or a stream schemathesis had to
  cut short is a stall of its route; a reset, a refused connection or garbage is no answer.
  Exploration continues past a failure, so a route that stalls would cost one timeout per
  generated case; a route that stalled twice (in this phase or an earlier one) is not sent to
  again. Its remaining cases fail at once with a message that says why, so the other operations
  are still reached. A route that stalled and never gave a whole answer is ``silent``: the schema
  phase's generic requirements are not verified then. When the guard finds the target stopped
  answering, the runner stops the run and this phase winds down.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from typing import Any

from ...check import internals
from ...check.guard import StallGuard
from ...run.watchdog import Late, Watchdog
from .ends import end_at_event


class TooLarge(Exception):
    """An answer past the byte cap (an endless stream, say): it costs a bound, like a stall."""


class _BoundedSession:
    """What schemathesis's ``_request`` sees as its session: the answer's body is read here, capped,
    and an event stream's exchange gets the stream budget (schemathesis reads it itself, to the
    protocol's end event when it declares one: ends.py)."""

    def __init__(self, session: Any, late: Late, max_bytes: int, stream_extra_s: float, end: str | None) -> None:
        self._session = session
        self._late = late
        self._max_bytes = max_bytes
        self._stream_extra_s = stream_extra_s
        self._end = end

    def request(self, **kwargs: Any) -> Any:
        response = self._session.request(**kwargs)
        if internals.get("schemathesis.is_event_stream")(response.headers.get("Content-Type")):
            self._late.deadline += self._stream_extra_s
            end_at_event(response, self._end)
        else:
            _read_capped(response, self._max_bytes)
        return response

    def __getattr__(self, name: str) -> Any:
        return getattr(self._session, name)


@contextmanager
def stall_guard(
    guard: StallGuard,
    watchdog: Watchdog,
    *,
    timeout: float,
    max_bytes: int,
    stream_seconds: float,
    stream_end: str | None = None,
) -> Iterator[None]:
    """Wrap schemathesis's ``requests`` exchange for the duration, telling ``guard`` how each ended;
    ``stream_end``: the data of the event that ends the protocol's event streams (its manifest's)."""
    import requests

    original = internals.get("schemathesis.request")
    connection = internals.get("urllib3.HTTPConnection")
    cut_short = internals.get("schemathesis.stream_cut_short")
    original_connect = connection.connect
    original_send = requests.Session.send
    inside = threading.local()  # set while ``bounded`` holds this thread's exchange

    def connect(self: Any) -> None:
        original_connect(self)
        watchdog.adopt(self.sock)  # so that a late or stopped exchange can be ended from outside

    def send(self: requests.Session, request: requests.PreparedRequest, **kwargs: Any) -> requests.Response:
        """Exchanges schemathesis makes outside ``_request`` (its probes) are held to the same bounds."""
        if getattr(inside, "active", False) or kwargs.get("stream"):
            return original_send(self, request, **kwargs)
        route = guard.route(str(request.url))
        refusal = guard.refusal(route)
        if refusal:
            raise requests.RequestException(refusal)
        with watchdog.exchange(timeout) as late:
            try:
                response = original_send(self, request, **{**kwargs, "stream": True})
                _read_capped(response, max_bytes)
            except (TooLarge, requests.RequestException) as exc:
                cut = _tell(guard, route, str(request.url), exc, late, watchdog, timeout)
                if cut:
                    raise requests.Timeout(cut) from None
                raise
        guard.complete(route)
        _saw(guard, response)
        return response

    def bounded(session: requests.Session, data: dict[str, Any], max_stream_events: int) -> requests.Response:
        inside.active = True
        try:
            return _bounded(session, data, max_stream_events)
        finally:
            inside.active = False

    def _bounded(session: requests.Session, data: dict[str, Any], max_stream_events: int) -> requests.Response:
        url = str(data.get("url", ""))
        route = guard.route(url)
        refusal = guard.refusal(route)
        if refusal:
            raise requests.RequestException(refusal)  # the base class: schemathesis shows its message as is
        with watchdog.exchange(timeout) as late:
            try:
                bounded_session = _BoundedSession(
                    session, late, max_bytes, max(stream_seconds - timeout, 0.0), stream_end
                )
                response: requests.Response = original(bounded_session, data, max_stream_events)  # type: ignore[arg-type]
            except (TooLarge, requests.RequestException) as exc:
                cut = _tell(guard, route, url, exc, late, watchdog, timeout)
                if cut:
                    raise requests.RequestException(cut) from None  # the base class: shown as is
                raise
        if late.cut or getattr(response, cut_short, False):
            guard.stalled(route, f"{url}: no complete answer within its bound (cut short)")
        else:
            guard.complete(route)
        _saw(guard, response)
        return response

    internals.replace("schemathesis.request", bounded)
    connection.connect = connect
    requests.Session.send = send  # type: ignore[method-assign]
    try:
        yield
    finally:
        internals.replace("schemathesis.request", original)
        connection.connect = original_connect
        requests.Session.send = original_send  # type: ignore[method-assign]


def _tell(
    guard: StallGuard, route: str, url: str, exc: BaseException, late: Late, watchdog: Watchdog, timeout: float
) -> str:
    """Tell the run's guard how an exchange failed, in the bounded client's words (check/http.py),
    not in the nested reprs ``requests`` and ``urllib3`` wrap it in. Returns the message of an
    exchange the watchdog cut for being late (raised instead of the reset the cut caused)."""
    import requests

    if watchdog.cutting:
        return ""  # the run (or the phase's budget) ended it: not the target's doing
    if late.cut:
        what = f"{url}: no complete answer within {timeout:g} s (stalled or trickling)"
        guard.stalled(route, what)
        return what
    if isinstance(exc, TooLarge):
        guard.stalled(route, str(exc))
    elif isinstance(exc, requests.ConnectTimeout):
        guard.stalled(route, f"connecting to {url} timed out after {timeout:g} s")
    elif isinstance(exc, requests.Timeout):
        guard.stalled(route, f"{url} sent nothing for {timeout:g} s (stalled)")
    elif "timed out" in str(exc).lower():  # the headers came, then the body stopped
        guard.stalled(route, f"{url} stalled mid-body: nothing for {timeout:g} s")
    elif isinstance(exc, requests.ConnectionError | requests.exceptions.ChunkedEncodingError):
        guard.unanswered(route, _no_answer(url, exc))  # a reset, a refused connection, garbage
    return ""


def _no_answer(url: str, exc: BaseException) -> str:
    """What a transport failure was, in the bounded client's words (check/http.py), not in the
    nested reprs ``requests`` and ``urllib3`` wrap it in."""
    import http.client

    seen: list[BaseException] = []
    todo: list[BaseException | None] = [exc]
    while todo and len(seen) < 12:
        cause = todo.pop()
        if cause is None or any(cause is s for s in seen):
            continue
        seen.append(cause)
        if isinstance(cause, ConnectionRefusedError):
            return f"cannot connect to {url}: connection refused"
        if isinstance(cause, ConnectionResetError | BrokenPipeError | ConnectionAbortedError):
            return f"{url}: connection reset"
        if isinstance(cause, http.client.RemoteDisconnected):
            return f"{url} broke the HTTP exchange: closed the connection without an answer"
        if isinstance(cause, http.client.BadStatusLine):
            return f"{url} broke the HTTP exchange: not an HTTP answer"
        todo += [cause.__cause__, cause.__context__, getattr(cause, "reason", None)]
        todo += [a for a in cause.args if isinstance(a, BaseException)]
    text = str(exc)
    return f"{url}: {text[:200]}{'...' if len(text) > 200 else ''}"


@cache
def _too_large_type() -> type[Exception]:
    """A ``requests`` error (schemathesis reports those as the target's) that is also ``TooLarge``;
    made on first use, so that importing this module does not import ``requests``."""
    import requests

    return type("ResponseTooLarge", (requests.RequestException, TooLarge), {})


def _too_large(message: str) -> Exception:
    return _too_large_type()(message)


def _saw(guard: StallGuard, response: Any) -> None:
    """Tell the run's coverage tap an exchange the engine made (its body only when read whole)."""
    sent = response.request
    loaded = getattr(response, "_content", False)  # a stream's body is left unread: nothing to parse
    answer = loaded if isinstance(loaded, bytes) and "json" in response.headers.get("content-type", "") else None
    guard.tap.saw(str(sent.method), str(sent.url), response.status_code, sent.headers.keys(), sent.body, answer)


def _read_capped(response: Any, max_bytes: int) -> None:
    """What ``requests`` does for a non-streamed answer (read the body into ``content``), with a cap."""

    chunks: list[bytes] = []
    size = 0
    for chunk in response.iter_content(64 << 10):
        size += len(chunk)
        if size > max_bytes:
            response.close()
            raise _too_large(f"{response.url}: response body exceeds the {max_bytes}-byte cap")
        chunks.append(chunk)
    response._content = b"".join(chunks)
    response._content_consumed = True
