"""The request journal: the most recent exchanges, as a client developer wants to see them.

Off until somebody asks for it (``--journal N`` or ``PUT /__mock/journal``), so that a mock nobody
reads pays nothing for it. Bounded three ways: a ring of at most ``size`` entries, each body cut at
``MAX_BODY`` bytes, and a stream's frames counted but kept only up to the same cut.
"""

from __future__ import annotations

import base64
import itertools
import json
import time
from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl

from specs import har

from .matching import MISSING, Seen

MAX_SIZE = 2_000
"""Most entries a journal may be asked to keep."""
DEFAULT_SIZE = 500
MAX_BODY = 32 << 10
"""Bytes of a request or response body an entry keeps; the rest is counted, not kept. With
MAX_SIZE entries, the journal holds at most 2 x 2,000 x 32 KiB = 125 MiB of bodies."""
REDACTED = ("authorization", "cookie", "proxy-authorization")


@dataclass(slots=True)
class Body:
    """Bytes seen on one side of an exchange, kept up to MAX_BODY."""

    kept: bytearray = field(default_factory=bytearray)
    size: int = 0
    limit: int | None = MAX_BODY
    """Bytes kept; None: all of them (a whole journal's)."""

    def add(self, data: bytes) -> None:
        self.size += len(data)
        if self.limit is None:
            self.kept += data
            return
        room = self.limit - len(self.kept)
        if room > 0:
            self.kept += data[:room]

    def view(self, content_type: str) -> dict[str, Any] | None:
        if not self.size:
            return None
        data = bytes(self.kept)
        out: dict[str, Any] = {"size": self.size, "truncated": self.size > len(data)}
        try:
            out["text"] = data.decode("utf-8")
        except UnicodeDecodeError:
            out["base64"] = base64.b64encode(data).decode("ascii")
        if content_type:
            out["content_type"] = content_type
        return out


@dataclass(slots=True)
class Entry:
    id: int
    at: float
    """Wall-clock time the request arrived (seconds since the epoch)."""
    protocol: str
    operation: str | None
    """The document's operationId; None for paths no operation serves (404/405)."""
    method: str
    path: str
    query: str
    path_params: dict[str, str]
    """The operation's path parameters, by name."""
    request_headers: dict[str, str]
    request_body: Body
    request_type: str
    status: int = 0
    """0 while the answer is not sent, and for a connection reset on purpose."""
    response_headers: dict[str, str] = field(default_factory=dict)
    response_body: Body = field(default_factory=Body)
    frames: int = 0
    """Frames written, for streamed answers."""
    latency_ms: float = 0.0
    chaos: list[str] = field(default_factory=list)
    """What chaos rules did to this exchange ("latency 120 ms", "error 429", ...)."""
    identity: str | None = None
    """The user the request authenticated as (Synapse: the --token name, never the token)."""
    stub: str | None = None
    """The id of the stub that answered, if one did."""
    client_left: bool = False
    """The client went away before a streamed answer's end: the body kept is not the stream's end."""

    def seen(self) -> Seen:
        """The request as the verify API's predicates see it (a body kept only in part is no JSON)."""
        body: Any = None
        if self.request_body.size:
            data = bytes(self.request_body.kept)
            try:
                body = json.loads(data) if self.request_body.size == len(data) else MISSING
            except (ValueError, RecursionError):
                body = MISSING
        query = dict(parse_qsl(self.query, keep_blank_values=True))
        return Seen(self.protocol, self.operation, self.path_params, query, self.request_headers, body, self.identity)

    def view(self) -> dict[str, Any]:
        response_type = self.response_headers.get("Content-Type", "")
        out: dict[str, Any] = {
            "id": self.id,
            "at": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(self.at)) + f".{int(self.at * 1000) % 1000:03d}Z",
            "protocol": self.protocol,
            "operation": self.operation,
            "request": {
                "method": self.method,
                "path": self.path,
                "path_params": self.path_params,
                "query": self.query,
                "headers": self.request_headers,
                "body": self.request_body.view(self.request_type),
            },
            "response": {
                "status": self.status,
                "headers": self.response_headers,
                "body": self.response_body.view(response_type),
            },
            "latency_ms": round(self.latency_ms, 3),
            "identity": self.identity,
            "stub": self.stub,
        }
        if self.frames:
            out["response"]["frames"] = self.frames
        if self.chaos:
            out["chaos"] = self.chaos
        return out


def redact(headers: Mapping[str, str]) -> dict[str, str]:
    """Headers as the journal shows them: credentials reduced to their scheme."""
    out = {}
    for name, value in headers.items():
        if name.lower() in REDACTED:
            scheme, _, rest = value.partition(" ")
            value = f"{scheme} <redacted>" if rest else "<redacted>"
        out[name] = value
    return out


class Journal:
    def __init__(self, size: int = 0) -> None:
        self._ids = itertools.count(1)
        self.entries: deque[Entry] = deque(maxlen=max(1, size))
        self.size = 0
        self.whole = False
        """Every exchange kept whole: no bound on entries or bodies, credentials as sent (``whole_traffic()``)."""
        self.resize(size)

    @classmethod
    def whole_traffic(cls) -> Journal:
        """A journal of a run's whole traffic, for a judge of it to read in the same process (the
        proxy's judge given a run's own exchanges): never offered over the admin API, since it is
        unbounded and keeps credentials."""
        journal = cls()
        journal.whole = True
        journal.entries = deque()
        return journal

    @property
    def enabled(self) -> bool:
        return self.size > 0 or self.whole

    def resize(self, size: int) -> None:
        if not 0 <= size <= MAX_SIZE:
            raise ValueError(f"journal size must be between 0 (off) and {MAX_SIZE}, got {size}")
        self.size = size
        self.whole = False
        self.entries = deque(self.entries if size else (), maxlen=max(1, size))

    def body(self) -> Body:
        """An entry's body, kept as this journal keeps them."""
        return Body(limit=None if self.whole else MAX_BODY)

    def headers(self, headers: Mapping[str, str]) -> dict[str, str]:
        """An entry's headers: redacted, but in a whole journal."""
        return dict(headers) if self.whole else redact(headers)

    def clear(self) -> None:
        self.entries.clear()

    def new_id(self) -> int:
        return next(self._ids)

    def add(self, entry: Entry) -> None:
        if self.enabled:
            self.entries.append(entry)

    def find(
        self,
        protocol: str | None = None,
        operation: str | None = None,
        status: int | None = None,
        limit: int | None = None,
    ) -> list[Entry]:
        """Matching entries, newest first."""
        found: Iterable[Entry] = reversed(self.entries)
        if protocol is not None:
            found = (e for e in found if e.protocol == protocol)
        if operation is not None:
            found = (e for e in found if e.operation == operation)
        if status is not None:
            found = (e for e in found if e.status == status)
        return list(itertools.islice(found, limit))


def har_exchange(origin: str, entry: Entry) -> har.HarEntry:
    """One journal entry as HAR's exchange (specs/har.py); ``origin`` is the mock's own."""
    url = origin + entry.path + (f"?{entry.query}" if entry.query else "")
    request_body = bytes(entry.request_body.kept)
    response_body = bytes(entry.response_body.kept)
    extra: dict[str, Any] = {"_protocol": entry.protocol, "_operation": entry.operation, "_id": entry.id}
    for name, value in (("_identity", entry.identity), ("_stub", entry.stub), ("_chaos", entry.chaos)):
        if value:
            extra[name] = value
    if entry.frames:
        extra["_frames"] = entry.frames
    return har.HarEntry(
        started=entry.at,
        method=entry.method,
        url=url,
        request_headers=har.redacted(entry.request_headers.items()),
        request_body=request_body,
        status=entry.status,
        response_headers=har.redacted(entry.response_headers.items()),
        response_body=response_body,
        time_ms=entry.latency_ms,
        request_size=entry.request_body.size if entry.request_body.size > len(request_body) else None,
        response_size=entry.response_body.size if entry.response_body.size > len(response_body) else None,
        extra=extra,
    )
