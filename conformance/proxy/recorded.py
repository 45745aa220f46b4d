"""The proxy's judge given recorded exchanges instead of live ones: each is fed to the observer as
the forwarding relay would feed it (request, head, the stream's bytes or the whole answer, end),
so traffic recorded elsewhere (a run's own, a server's journal) gets the live proxy's verdicts.
The adapter shape of openapi-core: one judge, a live adapter (forward.py) and this one."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl

from ..verdicts.results import RunResult
from .observer import Observer, Selection
from .report import run_result


@dataclass(frozen=True, slots=True)
class RecordedTraffic:
    """One exchange whole: the request as sent (its path with the document's base path), and the
    answer as it came (``status`` 0: none came)."""

    method: str
    path: str
    query: str
    request_headers: Mapping[str, str]
    request_body: bytes
    status: int
    response_headers: Mapping[str, str]
    response_body: bytes
    started_at: float
    """When the request arrived (seconds since the epoch): what a rule that waits reads."""
    elapsed_ms: float
    client_left: bool = False
    """The client went away mid-stream: its end is not judged, as the live proxy judges no end it
    did not see (``forward.client_gone``)."""

    def to_dict(self) -> dict[str, Any]:
        """As JSON (bodies as latin-1 text: every byte kept)."""
        out = {f: getattr(self, f) for f in self.__slots__}  # type: ignore[attr-defined]
        out["request_headers"], out["response_headers"] = dict(self.request_headers), dict(self.response_headers)
        out["request_body"] = self.request_body.decode("latin-1")
        out["response_body"] = self.response_body.decode("latin-1")
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RecordedTraffic:
        values = dict(data)
        values["request_body"] = str(values["request_body"]).encode("latin-1")
        values["response_body"] = str(values["response_body"]).encode("latin-1")
        return cls(**values)


def feed(observer: Observer, exchange: RecordedTraffic) -> None:
    """One exchange through the observer, in the live relay's order (forward.Proxy)."""
    query = parse_qsl(exchange.query, keep_blank_values=True)
    lowered = {k.lower(): v for k, v in exchange.request_headers.items()}
    flight = observer.begin(exchange.method, exchange.path, query, lowered, exchange.request_body)
    ex = flight.ex
    ex.started_at = exchange.started_at
    if not exchange.status:  # no answer: nothing of it to judge
        ex.error = "no answer"
        observer.commit(flight)
        return
    ex.status = exchange.status
    ex.response_headers = {k.lower(): v for k, v in exchange.response_headers.items()}
    ex.elapsed_ms = exchange.elapsed_ms
    kind = observer.stream_kind(flight)
    if kind is not None:
        observer.stream_start(flight, kind)
        observer.chunk(flight, exchange.response_body)
        if exchange.client_left:
            ex.error = "the client went away mid-answer"
            observer.commit(flight)  # the answer's end was never seen: it is not judged
            return
        observer.end(flight)
        return
    ex.response_body = exchange.response_body
    observer.whole(flight)
    observer.end(flight)


def judged(
    protocol_id: str,
    upstream: str,
    exchanges: Iterable[RecordedTraffic],
    tokens: tuple[str, ...] = (),
    settle_s: float = 30.0,
    selection: Selection | None = None,
) -> RunResult:
    """The proxy's verdicts on ``exchanges``, in their order, as if it had forwarded them to ``upstream``."""
    observer = Observer(protocol_id, upstream, tokens, settle_s=settle_s, selection=selection or Selection())
    for exchange in exchanges:
        feed(observer, exchange)
    return run_result(observer)
