"""HAR 1.2 (HTTP Archive): recorded exchanges as the file browsers, proxies and HAR viewers read.

Written once for both halves: the proxy exports the traffic it judged and the mock its journal.
A caller hands over what it recorded (``HarEntry``: bytes as they were, sizes as they were) and
gets the archive as plain data for ``json.dump``. Bodies that are not UTF-8 text go as base64
(``content.encoding``); a body kept only in part says so in its ``comment``, with the size it had.
Fields outside the format start with ``_``, as HAR 1.2 allows. Credentials are for the caller to
redact (``redacted``) before they reach an archive, which is made to be shared.
"""

from __future__ import annotations

import base64
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http import HTTPStatus
from http.cookies import CookieError, SimpleCookie
from typing import Any
from urllib.parse import parse_qsl, urlsplit

VERSION = "1.2"
CREDENTIALS = frozenset({"authorization", "proxy-authorization", "cookie", "set-cookie"})
"""Headers whose value ``redacted`` hides (the scheme of an Authorization value stays)."""


@dataclass(frozen=True, slots=True)
class HarEntry:
    """One request and its answer as recorded. ``status`` 0: no answer came (HAR's convention)."""

    started: float
    """Wall-clock time the request began (seconds since the epoch)."""
    method: str
    url: str
    """The whole URL, query included."""
    request_headers: Sequence[tuple[str, str]]
    request_body: bytes = b""
    status: int = 0
    response_headers: Sequence[tuple[str, str]] = ()
    response_body: bytes = b""
    time_ms: float = 0.0
    """From the request's start to the answer's last byte."""
    wait_ms: float | None = None
    """From the request's start to the answer's first byte, when known."""
    request_size: int | None = None
    response_size: int | None = None
    """The bodies' whole sizes when only the first bytes were kept (None: the body is whole)."""
    status_text: str = ""
    http_version: str = "HTTP/1.1"
    comment: str = ""
    extra: Mapping[str, Any] = field(default_factory=dict)
    """Custom fields of the entry; each name starts with ``_``."""


def redacted(headers: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
    """Headers with credentials hidden: ``Authorization: Bearer <redacted>``, cookies whole."""
    out = []
    for name, value in headers:
        if name.lower() in CREDENTIALS:
            scheme, _, rest = value.partition(" ")
            value = f"{scheme} <redacted>" if rest and name.lower().endswith("authorization") else "<redacted>"
        out.append((name, value))
    return out


def _header(headers: Sequence[tuple[str, str]], name: str) -> str:
    return next((v for k, v in headers if k.lower() == name), "")


def _pairs(headers: Sequence[tuple[str, str]]) -> list[dict[str, str]]:
    return [{"name": k, "value": v} for k, v in headers]


def _text(body: bytes) -> dict[str, str]:
    try:
        return {"text": body.decode("utf-8")}
    except UnicodeDecodeError:
        return {"text": base64.b64encode(body).decode("ascii"), "encoding": "base64"}


def _kept(size: int | None, body: bytes) -> str:
    return f"the first {len(body)} of {size} bytes kept" if size is not None and size > len(body) else ""


def _request_cookies(headers: Sequence[tuple[str, str]]) -> list[dict[str, str]]:
    cookies = []
    for part in _header(headers, "cookie").split(";"):
        name, eq, value = part.strip().partition("=")
        if name and eq:
            cookies.append({"name": name, "value": value})
    return cookies


def _response_cookies(headers: Sequence[tuple[str, str]]) -> list[dict[str, Any]]:
    cookies: list[dict[str, Any]] = []
    for name, value in headers:
        if name.lower() != "set-cookie":
            continue
        jar: SimpleCookie = SimpleCookie()
        try:
            jar.load(value)
        except CookieError:
            continue
        for morsel in jar.values():
            cookie: dict[str, Any] = {"name": morsel.key, "value": morsel.value}
            for attr in ("path", "domain", "expires"):
                if morsel[attr]:
                    cookie[attr] = str(morsel[attr])
            if morsel["httponly"]:
                cookie["httpOnly"] = True
            if morsel["secure"]:
                cookie["secure"] = True
            cookies.append(cookie)
    return cookies


def _started(at: float) -> str:
    return datetime.fromtimestamp(at, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def entry(ex: HarEntry) -> dict[str, Any]:
    """One HAR entry."""
    request: dict[str, Any] = {
        "method": ex.method.upper(),
        "url": ex.url,
        "httpVersion": ex.http_version,
        "cookies": _request_cookies(ex.request_headers),
        "headers": _pairs(ex.request_headers),
        "queryString": [{"name": k, "value": v} for k, v in parse_qsl(urlsplit(ex.url).query, keep_blank_values=True)],
        "headersSize": -1,
        "bodySize": ex.request_size if ex.request_size is not None else len(ex.request_body),
    }
    if ex.request_body or ex.request_size:
        post: dict[str, Any] = {"mimeType": _header(ex.request_headers, "content-type")}
        text = _text(ex.request_body)
        post["text"] = text["text"]
        notes = [n for n in ("base64" if "encoding" in text else "", _kept(ex.request_size, ex.request_body)) if n]
        if "encoding" in text:
            post["_encoding"] = "base64"  # postData has no encoding field: a body that is not text
        if notes:
            post["comment"] = "; ".join(notes)
        request["postData"] = post
    content: dict[str, Any] = {
        "size": ex.response_size if ex.response_size is not None else len(ex.response_body),
        "mimeType": _header(ex.response_headers, "content-type"),
    }
    if ex.response_body:
        content.update(_text(ex.response_body))
    if kept := _kept(ex.response_size, ex.response_body):
        content["comment"] = kept
    reason = ex.status_text
    if not reason and ex.status:
        try:
            reason = HTTPStatus(ex.status).phrase
        except ValueError:
            reason = ""
    response = {
        "status": ex.status,
        "statusText": reason,
        "httpVersion": ex.http_version if ex.status else "",
        "cookies": _response_cookies(ex.response_headers),
        "headers": _pairs(ex.response_headers),
        "content": content,
        "redirectURL": _header(ex.response_headers, "location"),
        "headersSize": -1,
        "bodySize": content["size"] if ex.status else -1,
    }
    total = max(ex.time_ms, 0.0)
    wait = min(max(ex.wait_ms if ex.wait_ms is not None else total, 0.0), total)
    out: dict[str, Any] = {
        "startedDateTime": _started(ex.started),
        "time": round(total, 3),
        "request": request,
        "response": response,
        "cache": {},
        "timings": {
            "blocked": -1,
            "dns": -1,
            "connect": -1,
            "ssl": -1,
            "send": 0,
            "wait": round(wait, 3),
            "receive": round(total - wait, 3),
        },
    }
    if ex.comment:
        out["comment"] = ex.comment
    for name, value in ex.extra.items():
        if not name.startswith("_"):
            raise ValueError(f"a custom HAR field must start with '_': {name!r}")
        out[name] = value
    return out


def archive(exchanges: Iterable[HarEntry], creator: str, version: str, comment: str = "") -> dict[str, Any]:
    """The whole HAR document, entries oldest first."""
    log: dict[str, Any] = {
        "version": VERSION,
        "creator": {"name": creator, "version": version},
        "entries": [entry(ex) for ex in sorted(exchanges, key=lambda e: e.started)],
    }
    if comment:
        log["comment"] = comment
    return {"log": log}
