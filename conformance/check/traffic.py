"""One exchange as the proxy saw it (what a passive check judges), and which document operation it is."""

from __future__ import annotations

import json
import re
import time
import zlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from email.parser import BytesParser
from email.policy import HTTP
from typing import Any
from urllib.parse import quote, unquote

import orjson

from specs.documents import Operation, Spec

from ..verdicts.results import Exchange
from .curl import curl_command
from .http import _preview, request_preview
from .judgments import Seen

_NOT_PARSED = object()


@dataclass(slots=True)
class Observed:
    """A request and its answer as forwarded; the body fields are bounded copies for judging."""

    number: int
    method: str
    path: str
    query: list[tuple[str, str]]
    request_headers: Mapping[str, str]
    request_body: bytes
    operation: Operation | None = None
    path_params: dict[str, str] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    """How the request departs from the document (empty when it conforms)."""
    status: int | None = None
    response_headers: Mapping[str, str] = field(default_factory=dict)
    response_body: bytes = b""
    """The whole answer, or for a stream the first bytes (evidence only)."""
    streamed: bool = False
    error: str | None = None
    elapsed_ms: float = 0.0
    started_at: float = field(default_factory=time.time)
    """Wall-clock time the request arrived (the HAR export's ``startedDateTime``)."""
    response_size: int = 0
    """A stream's bytes forwarded in all (``response_body`` keeps only the first)."""
    _json: Any = field(default=_NOT_PARSED, repr=False)
    _request_json: Any = field(default=_NOT_PARSED, repr=False)
    _content_type: str | None = field(default=None, repr=False)

    @property
    def label(self) -> str:
        op = f" ({self.operation.operation_id})" if self.operation else ""
        outcome = self.status if self.status is not None else "no answer"
        return f"#{self.number} {self.method} {self.path}{op} -> {outcome}"

    @property
    def operation_id(self) -> str | None:
        return self.operation.operation_id if self.operation else None

    def param(self, name: str) -> str | None:
        for key, value in self.query:
            if key == name:
                return value
        return None

    @property
    def content_type(self) -> str:
        """The answer's media type (read once the answer's headers are in)."""
        if self._content_type is None:
            self._content_type = media_type(self.response_headers.get("content-type", ""))
        return self._content_type

    @property
    def request_content_type(self) -> str:
        return media_type(self.request_headers.get("content-type", ""))

    def json(self) -> Any:
        """The answer's body as JSON, or ``None`` when it is not JSON (decoded once)."""
        if self._json is _NOT_PARSED:
            self._json = parse_json(decoded(self.response_body, self.response_headers))
        return self._json

    def request_json(self) -> Any:
        if self._request_json is _NOT_PARSED:
            self._request_json = parse_json(self.request_body) if self.request_body else None
        return self._request_json

    @property
    def left_open(self) -> bool:
        """The request holds a lone surrogate (RFC 8259 section 8.2: what software does with one is
        unpredictable): refusing it and keeping it are both fair, so neither is judged as the
        document's (SCHEMA-006/007); each protocol's HOSTILE requirement owns what follows it. In a
        multipart form, where JSON's escapes do not reach, a file name or text field that is not
        UTF-8 (a lone surrogate as a lenient encoder writes it) is left open alike."""
        if self.request_content_type == "multipart/form-data":
            return _form_not_utf8(self.request_headers.get("content-type", ""), self.request_body)
        if not _SURROGATE_ESCAPE.search(self.request_body):
            return False
        try:
            value = json.loads(self.request_body)
        except ValueError:
            return False
        return _holds_lone_surrogate(value)

    @property
    def bearer(self) -> str | None:
        """The request's bearer token, ``""`` for another scheme, None without Authorization."""
        value = self.request_headers.get("authorization")
        if value is None:
            return None
        scheme, _, token = value.partition(" ")
        return token.strip() if scheme.lower() == "bearer" else ""

    def seen(self) -> Seen:
        """As a judgment reads it (``check/judgments``): the path with its query, the whole answer."""
        return Seen(self.method, self.with_query(self.path), self.status, self.response_headers, self.response_body)

    def with_query(self, url: str) -> str:
        """``url`` with the request's query string."""
        query = "&".join(f"{quote(k, safe='')}={quote(v, safe='')}" for k, v in self.query)
        return f"{url}?{query}" if query else url

    def exchange(self, url: str) -> Exchange:
        """As evidence, with the curl line that replays the request against the upstream."""
        target = self.with_query(url)
        return Exchange(
            self.method,
            url,
            dict(self.request_headers),
            request_preview(self.request_body) if self.request_body else None,
            self.status,
            dict(self.response_headers),
            _preview(self.response_body) if self.response_body else None,
            self.error,
            self.elapsed_ms,
            curl_command(self.method, target, self.request_headers, self.request_body, stream=self.streamed),
        )


class NotJson:
    """A body that did not parse; carries why (distinct from a JSON ``null``)."""

    def __init__(self, reason: str) -> None:
        self.reason = reason

    def __repr__(self) -> str:
        return f"<not JSON: {self.reason}>"


def parse_json(raw: bytes) -> Any:
    """``json.loads``'s answer, by orjson where it agrees: orjson refuses what ``json`` accepts
    (integers past 64 bits, NaN, UTF-16 and UTF-32, a byte-order mark), and those go to ``json``."""
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        pass
    try:
        return json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        return NotJson(str(exc)[:200])


def media_type(header: str) -> str:
    return header.split(";", 1)[0].strip().lower()


def decoded(body: bytes, headers: Mapping[str, str]) -> bytes:
    """The body with gzip/deflate undone for judging (the client still gets the encoded bytes)."""
    encoding = headers.get("content-encoding", "identity").strip().lower()
    if encoding in ("gzip", "deflate") and body:
        try:
            return zlib.decompressobj(wbits=47 if encoding == "gzip" else 15).decompress(body, 64 << 20)
        except zlib.error:
            return body
    return body


class Routes:
    """Request path -> (operation, path parameters), most literal template first."""

    def __init__(self, spec: Spec) -> None:
        self.base_path = spec.info.base_path.rstrip("/")
        routes = []
        for op in spec.operations():
            parts = op.path.strip("/").split("/")
            pattern = "/".join("([^/]+)" if p.startswith("{") else re.escape(p) for p in parts)
            names = [p[1:-1] for p in parts if p.startswith("{")]
            literal = sum(not p.startswith("{") for p in parts)
            routes.append((-literal, len(parts), re.compile(f"^/{pattern}/?$"), names, op))
        routes.sort(key=lambda r: (r[0], r[1]))
        # indexed by method and segment count: a request is tried only against templates that fit;
        # a template without parameters is one dictionary lookup
        self._routes: dict[tuple[str, int], list[tuple[re.Pattern[str], list[str], Operation]]] = {}
        self._literal: dict[tuple[str, str], Operation] = {}
        for _, count, rx, names, op in routes:
            self._routes.setdefault((op.method, count), []).append((rx, names, op))
            if not names:
                self._literal.setdefault((op.method, "/" + op.path.strip("/")), op)

    def match(self, method: str, path: str) -> tuple[Operation, dict[str, str]] | None:
        method = method.lower()
        candidates = [path]
        if self.base_path and path.startswith(self.base_path + "/"):
            candidates.insert(0, path[len(self.base_path) :])
        for candidate in candidates:
            bare = candidate[:-1] if candidate.endswith("/") and len(candidate) > 1 else candidate
            literal = self._literal.get((method, bare))
            if literal is not None:
                return literal, {}
            count = len(candidate.strip("/").split("/"))
            for rx, names, op in self._routes.get((method, count), ()):
                found = rx.match(candidate)
                if found:
                    return op, {n: unquote(v) for n, v in zip(names, found.groups(), strict=True)}
        return None


def multipart_fields(ex: Observed) -> dict[str, tuple[str | None, bytes]] | None:
    """A multipart/form-data body's fields: name -> (file name, bytes); None when it does not parse."""
    header = ex.request_headers.get("content-type", "")
    try:
        message = BytesParser(policy=HTTP).parsebytes(
            b"Content-Type: " + header.encode("latin-1") + b"\r\n\r\n" + ex.request_body
        )
    except (UnicodeEncodeError, ValueError):
        return None
    if not message.is_multipart():
        return None
    fields: dict[str, tuple[str | None, bytes]] = {}
    for part in message.iter_parts():
        name = part.get_param("name", header="content-disposition")
        if isinstance(name, str):
            payload = part.get_payload(decode=True)
            fields[name] = (part.get_filename(), payload if isinstance(payload, bytes) else b"")
    return fields


_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


_BOUNDARY = re.compile(r'boundary="?([^";]+)"?', re.IGNORECASE)


def _form_not_utf8(content_type: str, body: bytes) -> bool:
    """Whether a multipart form's part headers (its file names) or text fields are not UTF-8, read
    from the bytes: a parser would put U+FFFD in their place and hide it. A file's content is
    anything."""
    found = _BOUNDARY.search(content_type)
    if found is None:
        return False
    for part in body.split(b"--" + found.group(1).encode("latin-1")):
        head, sep, content = part.partition(b"\r\n\r\n")
        if sep and (not _utf8(head) or (b"filename" not in head.lower() and not _utf8(content))):
            return True
    return False


def _utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _holds_lone_surrogate(value: Any) -> bool:
    """A surrogate code point left in a decoded JSON value is a lone one (the decoder joins pairs)."""
    if isinstance(value, str):
        return any("\ud800" <= c <= "\udfff" for c in value)
    if isinstance(value, dict):
        return any(_holds_lone_surrogate(k) or _holds_lone_surrogate(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_holds_lone_surrogate(v) for v in value)
    return False
