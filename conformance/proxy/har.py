"""``--har FILE``: the traffic the proxy forwarded, as an HTTP Archive (HAR 1.2, ``specs/har.py``).

For a client developer: open it in a browser's network panel or a HAR viewer and see what the
client sent and what it got, each entry naming the requirements it broke (``_violations``).
Bounded: the last ``entries`` exchanges, each body cut at ``body_bytes`` (the cut is noted in the
entry); credentials are redacted, since an archive is made to be passed around.
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from conformance import __version__
from specs import har

from ..check.traffic import Observed

MAX_ENTRIES = 1000
MAX_BODY = 64 << 10
"""Bytes of each body kept: with MAX_ENTRIES, at most 2 x 1,000 x 64 KiB = 125 MiB of bodies."""


class Recorder:
    def __init__(self, path: Path, upstream: str, entries: int = MAX_ENTRIES, body_bytes: int = MAX_BODY) -> None:
        self.path = path
        self.upstream = upstream.rstrip("/")
        self.body_bytes = body_bytes
        self.entries: deque[har.HarEntry] = deque(maxlen=entries)
        self.seen = 0

    def add(self, ex: Observed, broken: Mapping[str, str]) -> None:
        """A finished exchange, with the requirements it broke (id -> reason)."""
        self.seen += 1
        body = ex.response_body
        self.entries.append(
            har.HarEntry(
                started=ex.started_at,
                method=ex.method,
                url=ex.with_query(self.upstream + ex.path),
                request_headers=har.redacted(ex.request_headers.items()),
                request_body=ex.request_body[: self.body_bytes],
                status=ex.status or 0,
                response_headers=har.redacted(ex.response_headers.items()),
                response_body=body[: self.body_bytes],
                time_ms=ex.elapsed_ms,
                request_size=len(ex.request_body),
                response_size=max(ex.response_size, len(body)),
                comment=ex.error or "",
                extra={"_violations": [{"requirement": rid, "reason": why} for rid, why in sorted(broken.items())]}
                if broken
                else {},
            )
        )

    def archive(self) -> dict[str, Any]:
        dropped = self.seen - len(self.entries)
        note = f"the last {len(self.entries)} of {self.seen} exchanges" if dropped else ""
        return har.archive(self.entries, "agent-api-conformance proxy", __version__, note)

    def write(self) -> Path:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.write_text(json.dumps(self.archive(), ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
        return self.path
