"""The mock's journal as the client's traffic: each entry one exchange the client made, in order.

The journal is read over the mock's admin API (``GET /__mock/journal``), never by importing the
mock: the suite and the mock stay independent (pyproject.toml's import-linter contracts).
"""

from __future__ import annotations

import json
from calendar import timegm
from dataclasses import dataclass, field
from time import strptime
from typing import Any
from urllib.parse import parse_qsl

from ..check.traffic import Observed, Routes
from ..verdicts.results import Exchange


def _epoch(stamp: str) -> float:
    """``2026-12-04T21:41:26.123Z`` (the journal's form) as seconds since the epoch."""
    whole, _, millis = stamp.rstrip("Z").partition(".")
    return timegm(strptime(whole, "%Y-%m-%dT%H:%M:%S")) + int(millis or 0) / 1000


def _text(body: Any) -> str:
    if not isinstance(body, dict):
        return ""
    return str(body.get("text", ""))


def _kept(request: dict[str, Any]) -> bool:
    body = request.get("body")
    if isinstance(body, dict):
        return not body.get("truncated") and "text" in body
    headers = {k.lower(): v for k, v in (request.get("headers") or {}).items()}
    sent = headers.get("content-length", "0") not in ("", "0") or "transfer-encoding" in headers
    return not sent


@dataclass(slots=True)
class Seen:
    """One exchange the client made, as the mock's journal kept it."""

    number: int
    at: float
    """When the request arrived (seconds since the epoch, to the millisecond)."""
    operation: str | None
    method: str
    path: str
    query: list[tuple[str, str]]
    path_params: dict[str, str]
    request_headers: dict[str, str]
    """Lower-case names; credentials redacted by the mock."""
    request_body: str
    status: int
    response_headers: dict[str, str]
    response_body: str
    latency_s: float
    stub: str | None = None
    chaos: list[str] = field(default_factory=list)
    body_kept: bool = True
    """False when the mock did not keep the whole request body: it refused the request before
    reading it (a 401), or cut it at its journal's bound. Such a body is not judged."""

    @classmethod
    def of(cls, number: int, entry: dict[str, Any]) -> Seen:
        request, response = entry["request"], entry["response"]
        return cls(
            number,
            _epoch(entry["at"]),
            entry.get("operation"),
            request["method"],
            request["path"],
            parse_qsl(request.get("query") or "", keep_blank_values=True),
            dict(request.get("path_params") or {}),
            {k.lower(): v for k, v in (request.get("headers") or {}).items()},
            _text(request.get("body")),
            int(response.get("status") or 0),
            {k.lower(): v for k, v in (response.get("headers") or {}).items()},
            _text(response.get("body")),
            float(entry.get("latency_ms") or 0) / 1000,
            entry.get("stub"),
            list(entry.get("chaos") or ()),
            _kept(request),
        )

    @property
    def label(self) -> str:
        op = f" ({self.operation})" if self.operation else ""
        return f"#{self.number} {self.method} {self.path}{op} -> {self.status or 'no answer'}"

    def param(self, name: str) -> str | None:
        return next((v for k, v in self.query if k == name), None)

    def request_json(self) -> Any:
        try:
            return json.loads(self.request_body) if self.request_body else None
        except ValueError:
            return None

    def json(self) -> Any:
        try:
            return json.loads(self.response_body) if self.response_body else None
        except ValueError:
            return None

    def observed(self, routes: Routes) -> Observed:
        """The exchange as the proxy's document judge reads one (its operation matched the same way)."""
        ex = Observed(
            self.number,
            self.method,
            self.path,
            self.query,
            self.request_headers,
            self.request_body.encode(),
            status=self.status,
            response_headers=self.response_headers,
            response_body=self.response_body.encode(),
            started_at=self.at,
        )
        matched = routes.match(self.method, self.path)
        if matched:
            ex.operation, ex.path_params = matched
        return ex

    def evidence(self, origin: str) -> Exchange:
        query = "&".join(f"{k}={v}" for k, v in self.query)
        return Exchange(
            self.method,
            origin + self.path + (f"?{query}" if query else ""),
            self.request_headers,
            self.request_body or None,
            self.status or None,
            self.response_headers,
            self.response_body or None,
            elapsed_ms=self.latency_s * 1000,
            started=self.at,
        )


def traffic(entries: list[dict[str, Any]]) -> list[Seen]:
    """The journal's entries (newest first, as the admin API lists them) in the order they came."""
    return [Seen.of(n, e) for n, e in enumerate(reversed(entries), 1)]
