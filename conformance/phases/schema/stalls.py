"""The property-based phase's exchanges held to the suite's bounds; stalled routes get no more cases.

schemathesis bounds each exchange by a read timeout, and an event stream once the request timeout
has passed in total. That leaves a body trickling one byte a second (no single read times out), an
endless stream of another media type (NeuroSan's ``application/json-lines``), and an answer of any
size. While the phase runs, every exchange schemathesis makes goes through one wrapper (its probes
through ``requests.Session.send``, held to the same bounds), which:

- holds the whole exchange, body included, to ``timeout`` (an event stream to the suite's stream
  budget): the watchdog shuts down the exchange's sockets when it is late, or when the run stops;
- reads a non-stream body itself, at most ``max_bytes`` of it;
- counts a timeout, a late exchange cut by the watchdog, an answer past the cap (an endless
  stream) or a stream schemathesis had to cut short as a stall of its route. Exploration continues
  past a failure, so a route that stalls would cost one timeout per generated case; a route that
  stalled twice is not sent to again. Its remaining cases fail at once with a message that says
  why, so the other operations are still reached. A route that stalled and never gave a whole
  answer is ``silent``: the schema phase's generic requirements are not verified then.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import cache
from typing import Any

from ...run.watchdog import Late, Watchdog

STALLS_PER_ROUTE = 2


class StallLedger:
    """Stalls (timeouts) per route, shared by the worker threads."""

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()
        self.not_sent: Counter[str] = Counter()
        self.answered: set[str] = set()
        """Routes that gave a whole answer at least once (not cut short, within the bounds)."""
        self._lock = threading.Lock()

    def stalled(self, route: str) -> None:
        with self._lock:
            self.counts[route] += 1

    def complete(self, route: str) -> None:
        with self._lock:
            self.answered.add(route)

    def silent(self) -> set[str]:
        """Routes that stalled and never gave a whole answer: nothing generic was checked there."""
        with self._lock:
            return set(self.counts) - self.answered

    def refuses(self, route: str) -> bool:
        with self._lock:
            if self.counts[route] >= STALLS_PER_ROUTE:
                self.not_sent[route] += 1
                return True
            return False

    def summary(self) -> dict[str, dict[str, int]]:
        return {route: {"stalls": n, "cases_not_sent": self.not_sent[route]} for route, n in self.counts.items()}


class TooLarge(Exception):
    """An answer past the byte cap (an endless stream, say): it costs a bound, like a stall."""


class _BoundedSession:
    """What schemathesis's ``_request`` sees as its session: the answer's body is read here, capped,
    and an event stream's exchange gets the stream budget (schemathesis reads it itself)."""

    def __init__(self, session: Any, late: Late, max_bytes: int, stream_extra_s: float) -> None:
        self._session = session
        self._late = late
        self._max_bytes = max_bytes
        self._stream_extra_s = stream_extra_s

    def request(self, **kwargs: Any) -> Any:
        from schemathesis.core.transport import is_event_stream

        response = self._session.request(**kwargs)
        if is_event_stream(response.headers.get("Content-Type")):
            self._late.deadline += self._stream_extra_s
        else:
            _read_capped(response, self._max_bytes)
        return response

    def __getattr__(self, name: str) -> Any:
        return getattr(self._session, name)


@contextmanager
def stall_guard(
    route_of: Callable[[str], str],
    stalls: StallLedger,
    watchdog: Watchdog,
    *,
    timeout: float,
    max_bytes: int,
    stream_seconds: float,
) -> Iterator[None]:
    """Wrap schemathesis's ``requests`` exchange for the duration; ``route_of(url)`` names the route."""
    import requests
    import schemathesis.transport.requests as transport
    import urllib3.connection
    from schemathesis.core.transport import STREAM_CUT_SHORT_ATTRIBUTE

    original = transport._request
    original_connect = urllib3.connection.HTTPConnection.connect
    original_send = requests.Session.send
    inside = threading.local()  # set while ``bounded`` holds this thread's exchange

    def connect(self: Any) -> None:
        original_connect(self)
        watchdog.adopt(self.sock)  # so that a late or stopped exchange can be ended from outside

    def send(self: requests.Session, request: requests.PreparedRequest, **kwargs: Any) -> requests.Response:
        """Exchanges schemathesis makes outside ``_request`` (its probes) are held to the same bounds."""
        if getattr(inside, "active", False) or kwargs.get("stream"):
            return original_send(self, request, **kwargs)
        with watchdog.exchange(timeout) as late:
            try:
                response = original_send(self, request, **{**kwargs, "stream": True})
                _read_capped(response, max_bytes)
            except (requests.ConnectionError, requests.exceptions.ChunkedEncodingError):
                if late.cut and watchdog.stopped is None:
                    raise requests.Timeout(f"{request.url}: no complete answer within {timeout:g} s") from None
                raise
        return response

    def bounded(session: requests.Session, data: dict[str, Any], max_stream_events: int) -> requests.Response:
        inside.active = True
        try:
            return _bounded(session, data, max_stream_events)
        finally:
            inside.active = False

    def _bounded(session: requests.Session, data: dict[str, Any], max_stream_events: int) -> requests.Response:
        route = route_of(str(data.get("url", "")))
        if stalls.refuses(route):
            raise requests.RequestException(  # the base class: schemathesis shows its message as is
                f"not sent: {route} stalled {STALLS_PER_ROUTE} times, so it gets no more generated cases"
            )
        with watchdog.exchange(timeout) as late:
            try:
                bounded_session = _BoundedSession(session, late, max_bytes, max(stream_seconds - timeout, 0.0))
                response: requests.Response = original(bounded_session, data, max_stream_events)  # type: ignore[arg-type]
            except TooLarge:
                stalls.stalled(route)
                raise
            except (requests.Timeout, requests.ConnectionError, requests.exceptions.ChunkedEncodingError) as exc:
                if late.cut and watchdog.stopped is None:
                    stalls.stalled(route)
                    raise requests.RequestException(
                        f"{data.get('url')}: no complete answer within {timeout:g} s (stalled or trickling)"
                    ) from None
                if isinstance(exc, requests.Timeout) or "timed out" in str(exc).lower():
                    stalls.stalled(route)
                raise
        if late.cut or getattr(response, STREAM_CUT_SHORT_ATTRIBUTE, False):
            stalls.stalled(route)
        else:
            stalls.complete(route)
        return response

    transport._request = bounded
    urllib3.connection.HTTPConnection.connect = connect  # type: ignore[method-assign]
    requests.Session.send = send  # type: ignore[method-assign]
    try:
        yield
    finally:
        transport._request = original
        urllib3.connection.HTTPConnection.connect = original_connect  # type: ignore[method-assign]
        requests.Session.send = original_send  # type: ignore[method-assign]


@cache
def _too_large_type() -> type[Exception]:
    """A ``requests`` error (schemathesis reports those as the target's) that is also ``TooLarge``;
    made on first use, so that importing this module does not import ``requests``."""
    import requests

    return type("ResponseTooLarge", (requests.RequestException, TooLarge), {})


def _too_large(message: str) -> Exception:
    return _too_large_type()(message)


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
