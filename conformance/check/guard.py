"""The run's stall guard: one for every phase (shared through the run's state), so that what the
target showed in one phase is not paid for again in the next.

- A route (the document path a URL falls under, whatever the method) that stalled twice is not
  waited on again: each stall costs a timeout, and a route that stalled twice stalls again. A
  stall is an exchange that cost its bound without a whole answer: nothing for a timeout
  (headers or body), a body trickling past it, a stream still open past its budget, an answer
  past the byte cap (an endless stream). The property-based phase sends such a route no more
  generated cases (``refusal``). A check or a model step, whose requirement is decided by what
  its one request gets, still sends it, but waits ``wait(route, timeout)``: a second or so, not
  the timeout. Its answer comes as before when it is an answer the route does give (an error
  status, the first events of a stream), and a stall is met again at once, with the same
  verdict: refusing it instead would turn every check of that route into "not sent", and fail
  requirements (an error status on the route) that its stall never touched.
- A target that stopped answering altogether is recognised: ``STOPPED_AFTER`` consecutive
  exchanges, on as many different routes, that got no answer (stalled, reset, refused, not HTTP)
  with no whole answer between them. The guard then says so (``lost``), tells ``on_lost`` once
  (the runner stops the run there: the rest "not verified (the target stopped answering)") and
  refuses every further request, instead of paying a timeout per remaining request.

- A wait for the server's progress (a job's result, an agent's research: ``check/waiting.py``)
  that ran out its bound is not paid again: a later wait on the same progress (``waited_out``)
  lasts ``STALLED_WAIT_S``, so a job that never finishes costs the run one bound, not one per
  check and model sequence that starts a job.

A refusal is a ``refusal(route)`` sentence the caller raises as its transport's error, so a check
reports it like any other failure of the target, at once.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable
from urllib.parse import urlsplit

from specs.documents import Spec

from .coverage import Tap

STALLS_PER_ROUTE = 2
STALLED_WAIT_S = 1.0
"""The least a route that stalled twice is waited on (a tenth of the timeout, when that is more)."""
STOPPED_AFTER = 3
"""Consecutive exchanges without an answer, each on another route, that make a target "stopped
answering" (one route that stalls is that route's fault; the guard stops sending to it)."""
STOPPED_ANSWERING = "the target stopped answering"
"""The kind of a run stopped by the guard: what is left undecided reads "not verified (<kind>)"."""


class Routes:
    """The document path a URL falls under, whatever the method: a stalled route stalls for every
    method (the property-based phase's coverage stage also sends undocumented ones). The first
    method, in document order, with an operation whose template matches (the one with the most
    literal segments) names it; else the URL's own path. It runs for every request, so the
    templates are split once here."""

    def __init__(self, spec: Spec, base_url: str) -> None:
        self.base = urlsplit(base_url).path.rstrip("/")
        self.methods: dict[str, list[tuple[tuple[str | None, ...], str]]] = {}
        for op in spec.operations():
            template = tuple(None if s.startswith("{") and s.endswith("}") else s for s in _segments(op.path))
            self.methods.setdefault(op.method, []).append((template, op.path))

    def __call__(self, url: str) -> str:
        path = urlsplit(url).path
        if self.base and path.startswith(self.base):
            path = path[len(self.base) :] or "/"
        got = _segments(path)
        for templates in self.methods.values():
            best: tuple[int, str] | None = None
            for template, route in templates:
                if len(template) != len(got):
                    continue
                literal = 0
                for want, seen in zip(template, got, strict=True):
                    if want is None:
                        continue
                    if want != seen:
                        break
                    literal += 1
                else:
                    if best is None or literal > best[0]:
                        best = (literal, route)
            if best is not None:
                return best[1]
            if "{" in path:  # as the first method without a match would name it
                return path
        return path


def _segments(path: str) -> list[str]:
    return [s for s in path.strip("/").split("/") if s]


def _path(url: str) -> str:
    return urlsplit(url).path or "/"


class StallGuard:
    """Stalls per route and the run of exchanges without an answer; shared by every phase's
    clients, the property-based phase's worker threads included."""

    def __init__(self, route_of: Callable[[str], str] = _path, on_lost: Callable[[str], None] | None = None) -> None:
        self.route_of = route_of
        self.on_lost = on_lost
        self.counts: Counter[str] = Counter()
        """Stalls per route."""
        self.not_sent: Counter[str] = Counter()
        """Requests refused per route (it stalled twice, or the target stopped answering)."""
        self.answered: set[str] = set()
        """Routes that gave a whole answer at least once (not cut short, within the bounds)."""
        self.lost = ""
        """Why the target is taken as stopped answering; empty while it answers."""
        self.waits_out: Counter[str] = Counter()
        """Waits for the server's progress that ran out their bound, per kind of progress."""
        self._silence: list[tuple[str, str]] = []
        """The exchanges without an answer since the last whole answer: (route, what happened)."""
        self._lock = threading.Lock()
        self.tap = Tap(route_of)
        """What the run's exchanges exercised of the document (every client that tells the guard tells it)."""

    def route(self, url: str) -> str:
        return self.route_of(url)

    def refusal(self, route: str, *, generated: bool = True) -> str:
        """Why a request to ``route`` is not sent (it counts as not sent), or "" to send it: nothing
        goes to a target that stopped answering, no ``generated`` case to a route that stalled twice."""
        with self._lock:
            if self.lost:
                self.not_sent[route] += 1
                return f"not sent: {STOPPED_ANSWERING} ({self.lost})"
            if generated and self.counts[route] >= STALLS_PER_ROUTE:
                self.not_sent[route] += 1
                return f"not sent: {route} stalled {STALLS_PER_ROUTE} times, so it gets no more generated cases"
            return ""

    def wait(self, route: str, timeout: float) -> float:
        """How long an exchange with ``route`` is waited on: ``timeout``, or far less once it stalled twice."""
        with self._lock:
            if self.counts[route] < STALLS_PER_ROUTE:
                return timeout
        return min(timeout, max(STALLED_WAIT_S, timeout / 10))

    def patience(self, what: str, bound: float) -> float:
        """How long a wait for the server's progress on ``what`` lasts: ``bound``, or far less once
        such a wait ran out (the progress that never came once is not waited out again)."""
        with self._lock:
            if not self.waits_out[what]:
                return bound
        return min(bound, STALLED_WAIT_S)

    def waited_out(self, what: str) -> None:
        """A wait for the server's progress on ``what`` ran out its bound."""
        with self._lock:
            self.waits_out[what] += 1

    def complete(self, route: str) -> None:
        """A whole answer (whatever its status): the route and the target answer."""
        with self._lock:
            self.answered.add(route)
            self._silence.clear()

    def stalled(self, route: str, what: str) -> None:
        """An exchange that cost its bound without a whole answer."""
        with self._lock:
            self.counts[route] += 1
        self.unanswered(route, what)

    def unanswered(self, route: str, what: str) -> None:
        """An exchange that got no answer (stalled, reset, refused, not HTTP)."""
        with self._lock:
            if self.lost:
                return
            self._silence.append((route, what))
            routes = dict(self._silence)  # the latest of each route
            if len(routes) < STOPPED_AFTER:
                return
            self.lost = (
                f"{len(self._silence)} consecutive exchanges on {len(routes)} different routes got no answer: "
                + "; ".join(routes.values())
            )
            lost, tell = self.lost, self.on_lost
        if tell is not None:
            tell(lost)

    def silent(self) -> set[str]:
        """Routes that stalled and never gave a whole answer: nothing generic was checked there."""
        with self._lock:
            return set(self.counts) - self.answered

    def summary(self) -> dict[str, dict[str, int]]:
        with self._lock:
            return {route: {"stalls": n, "cases_not_sent": self.not_sent[route]} for route, n in self.counts.items()}
