"""Stalled routes get no more generated cases in the property-based phase.

schemathesis bounds each exchange (a read timeout; an event stream cut once the request timeout has
passed in total), but exploration continues past a failure, so a route that stalls (headers sent,
then nothing; a stream that never ends) would cost one timeout per generated case, and a run
against such a target would take many minutes. While the phase runs, every exchange schemathesis
makes goes through one wrapper: a timeout, or a stream schemathesis had to cut short, counts as a
stall of its route, and a route that stalled twice is not sent to again. Its remaining cases fail
at once with a message that says why, so the other operations are still reached within the budget.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

STALLS_PER_ROUTE = 2


class StallLedger:
    """Stalls (timeouts) per route, shared by the worker threads."""

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()
        self.not_sent: Counter[str] = Counter()
        self._lock = threading.Lock()

    def stalled(self, route: str) -> None:
        with self._lock:
            self.counts[route] += 1

    def refuses(self, route: str) -> bool:
        with self._lock:
            if self.counts[route] >= STALLS_PER_ROUTE:
                self.not_sent[route] += 1
                return True
            return False

    def summary(self) -> dict[str, dict[str, int]]:
        return {route: {"stalls": n, "cases_not_sent": self.not_sent[route]} for route, n in self.counts.items()}


@contextmanager
def stall_guard(route_of: Callable[[str], str], stalls: StallLedger) -> Iterator[None]:
    """Wrap schemathesis's ``requests`` exchange for the duration; ``route_of(url)`` names the route."""
    import requests
    import schemathesis.transport.requests as transport
    from schemathesis.core.transport import STREAM_CUT_SHORT_ATTRIBUTE

    original = transport._request

    def bounded(session: requests.Session, data: dict[str, Any], max_stream_events: int) -> requests.Response:
        route = route_of(str(data.get("url", "")))
        if stalls.refuses(route):
            raise requests.RequestException(  # the base class: schemathesis shows its message as is
                f"not sent: {route} stalled {STALLS_PER_ROUTE} times, so it gets no more generated cases"
            )
        try:
            response: requests.Response = original(session, data, max_stream_events)
        except (requests.Timeout, requests.ConnectionError) as exc:
            if isinstance(exc, requests.Timeout) or "timed out" in str(exc).lower():
                stalls.stalled(route)
            raise
        if getattr(response, STREAM_CUT_SHORT_ATTRIBUTE, False):
            stalls.stalled(route)
        return response

    transport._request = bounded
    try:
        yield
    finally:
        transport._request = original
