"""Request validation compiled from the protocol document once, at start-up.

Each operation gets an ``OperationValidator`` holding pre-built JSON Schema validators for its
parameters and body; the request path does only coercion and one validator call per part.
"""

from __future__ import annotations

import asyncio
import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from aiohttp import BodyPartReader, MultipartReader, web
from aiohttp.http_exceptions import HttpProcessingError
from multidict import CIMultiDict, CIMultiDictProxy

from specs.documents import protocol
from specs.schemas import SchemaSet

from .errors import ApiError
from .hooks import EXCHANGE
from .hostile import REFUSES, Hostile, Surrogates, replaced
from .jsonio import loads_fast

_DECODING = {Surrogates.REFUSED: "strict", Surrogates.KEPT: "surrogateescape", Surrogates.REPLACED: "replace"}
"""How a multipart text field's bytes are decoded, by the hostile faults' way with lone surrogates."""


@dataclass(slots=True)
class UploadedFile:
    filename: str
    content_type: str
    data: bytes


MAX_PART_HEADERS = 32
MAX_MESSAGE = 300
"""Longest validator message echoed back (they quote the offending value, which may be huge)."""
MAX_JSON_DEPTH = 100
"""Deepest nesting of arrays and objects a JSON body may have (MockLimits.max_json_depth's default)."""
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")
"""A ``\\uD800``-``\\uDFFF`` escape: the only way a JSON text can carry a lone surrogate."""


_LONG_DIGITS = re.compile(rb"\d{19}")
"""A run of digits that may be an integer orjson would not keep exact."""


class JsonBodyError(ValueError):
    """A body that is not acceptable JSON; its message is safe to show a client."""


def _no_constants(name: str) -> Any:
    raise JsonBodyError(f"{name} is not a JSON value")


def _finite_float(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise JsonBodyError(f"number {text[:40]} is out of range")
    return value


def _depth_exceeds(data: Any, limit: int) -> bool:
    """Whether arrays and objects nest deeper than ``limit`` (iterative: deep data cannot recurse)."""
    stack: list[tuple[Any, int]] = [(data, 1)]
    while stack:
        node, depth = stack.pop()
        children = node.values() if isinstance(node, dict) else node if isinstance(node, list) else None
        if children is None:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children if isinstance(child, dict | list))
    return False


def _unpaired(data: Any) -> bool:
    """Whether parsed JSON holds a lone surrogate (a pair's escapes parse to one character)."""
    try:
        json.dumps(data, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def parse_json(raw: bytes, max_depth: int = MAX_JSON_DEPTH, surrogates: Surrogates = Surrogates.REFUSED) -> Any:
    """A request body as JSON (RFC 8259, I-JSON's Unicode rule), or ``JsonBodyError``.

    Beyond ``json.loads``: NaN and Infinity are refused (they are not JSON), as are numbers that
    overflow a double and strings with an unpaired surrogate (``"\\ud800"``, which no UTF-8 text
    can hold); nesting deeper than ``max_depth`` is refused before it can exhaust the interpreter's
    recursion limit in a decoder, a validator or an encoder. Every message is the client's
    mistake in plain words, never an interpreter's.
    """
    # The common case first: orjson on the bytes as they came. What it accepts is valid UTF-8 with
    # no byte order mark, no NaN or Infinity, no number that overflows a double and no unpaired
    # surrogate, parsed to what json.loads gives, except integers beyond 64 bits (it makes them
    # floats), so texts with a 19-digit run skip it. Whatever it refuses is decided below by the
    # standard library, with the same verdict and message as ever.
    if _LONG_DIGITS.search(raw) is None:
        try:
            data = loads_fast(raw)
        except ValueError:
            pass
        else:
            if raw.count(b"[") + raw.count(b"{") > max_depth and _depth_exceeds(data, max_depth):
                raise JsonBodyError(f"arrays and objects nest deeper than {max_depth} levels")
            return data
    try:
        text = raw.decode("utf-8-sig")  # RFC 8259: UTF-8; a byte order mark may be ignored
    except UnicodeDecodeError as exc:
        raise JsonBodyError(f"the body is not valid UTF-8 (byte {exc.start})") from None
    try:
        data = json.loads(text, parse_constant=_no_constants, parse_float=_finite_float)
    except json.JSONDecodeError as exc:
        raise JsonBodyError(f"{exc.msg}: line {exc.lineno} column {exc.colno} (char {exc.pos})") from None
    except RecursionError:
        raise JsonBodyError(f"arrays and objects nest deeper than {max_depth} levels") from None
    except JsonBodyError:
        raise
    except ValueError:  # an integer beyond the interpreter's digit limit
        raise JsonBodyError("a number has too many digits") from None
    if (text.count("[") + text.count("{") > max_depth) and _depth_exceeds(data, max_depth):
        raise JsonBodyError(f"arrays and objects nest deeper than {max_depth} levels")
    if _SURROGATE_ESCAPE.search(raw) and _unpaired(data):
        if surrogates is Surrogates.KEPT:  # the hostile faults (mockserver/hostile.py)
            return data
        if surrogates is Surrogates.REPLACED:
            return replaced(data)
        raise JsonBodyError("a string holds an unpaired UTF-16 surrogate, which is not Unicode text")
    return data


class _Tee:
    """A request's body stream that keeps what the multipart reader took of it (what it gave back
    unread excepted): a journal that keeps whole bodies keeps an upload's too."""

    def __init__(self, content: Any) -> None:
        self.content = content
        self.seen = bytearray()

    async def read(self, n: int = -1) -> bytes:
        data: bytes = await self.content.read(n)
        self.seen += data
        return data

    async def readline(self, *args: Any, **kwargs: Any) -> bytes:
        data: bytes = await self.content.readline(*args, **kwargs)
        self.seen += data
        return data

    def unread_data(self, data: bytes) -> None:
        if data:
            del self.seen[-len(data) :]
        self.content.unread_data(data)

    def at_eof(self) -> bool:
        return bool(self.content.at_eof())


class _FormReader(MultipartReader):
    """Reads part headers the way form encoders write them. The HTML standard's multipart/form-data
    encoding escapes only CR, LF and '"' in field and file names, so other control characters
    arrive raw; aiohttp's RFC 9110 header parser would refuse such a form with an exception."""

    async def _read_headers(self) -> CIMultiDictProxy[str]:
        headers: CIMultiDict[str] = CIMultiDict()
        last = ""
        for _ in range(MAX_PART_HEADERS + 1):
            line = (await self._content.readline()).rstrip(b"\r\n")
            if not line:
                return CIMultiDictProxy(headers)
            if line[:1] in (b" ", b"\t") and last:  # an obsolete folded continuation line
                headers[last] += " " + line.strip().decode("utf-8", "surrogateescape")
                continue
            name, sep, value = line.partition(b":")
            if not sep or not name.strip():
                raise ValueError(f"malformed part header {line[:100]!r}")
            last = name.strip().decode("latin-1")
            headers.add(last, value.strip(b" \t").decode("utf-8", "surrogateescape"))
        raise ValueError(f"more than {MAX_PART_HEADERS} headers in one part")


@dataclass(frozen=True, slots=True)
class _Param:
    name: str
    location: str
    required: bool
    kind: str
    validator: Any
    default: Any


def _violation(loc: list[Any], msg: str, kind: str, value: Any) -> dict[str, Any]:
    if isinstance(value, str | int | float | bool) or value is None:
        shown = value if not isinstance(value, str) else value[:200]
    else:
        shown = None  # structured inputs are not echoed back
    return {"type": kind, "loc": loc, "msg": msg, "input": shown}


def _coerce(raw: str, kind: str) -> Any:
    if kind == "integer":
        return int(raw)
    if kind == "number":
        return float(raw)
    if kind == "boolean":
        if raw.lower() in ("true", "1"):
            return True
        if raw.lower() in ("false", "0"):
            return False
        raise ValueError(raw)
    return raw


class OperationValidator:
    def __init__(
        self,
        protocol_id: str,
        definition: Mapping[str, Any],
        path_item: Mapping[str, Any],
        schemas: SchemaSet,
        max_json_bytes: int,
        max_upload_bytes: int,
        max_json_depth: int = MAX_JSON_DEPTH,
    ) -> None:
        self.protocol_id = protocol_id
        self.invalid_status = protocol(protocol_id).error.invalid_body_status
        self.max_json_bytes = max_json_bytes
        self.max_upload_bytes = max_upload_bytes
        self.max_json_depth = max_json_depth
        self.params: list[_Param] = []
        merged = {(p["name"], p["in"]): p for p in path_item.get("parameters", [])}
        merged.update({(p["name"], p["in"]): p for p in definition.get("parameters", [])})
        for p in merged.values():
            schema = p.get("schema", {})
            kind = schema.get("type", "string")
            self.params.append(
                _Param(
                    p["name"],
                    p["in"],
                    bool(p.get("required")),
                    kind if isinstance(kind, str) else "string",
                    schemas.validator(schema),
                    schema.get("default"),
                )
            )
        self._defaults_only = all(p.location == "query" and not p.required for p in self.params)
        """No parameter but optional query ones: a request without a query string has only defaults."""
        self._query_defaults = {p.name: p.default for p in self.params if p.default is not None}
        body = definition.get("requestBody") or {}
        self.body_required = bool(body.get("required"))
        self.media: dict[str, Any] = {}
        for media_type, media in (body.get("content") or {}).items():
            self.media[media_type] = schemas.validator(media.get("schema") or {})
        self.exact_media = {m: v for m, v in self.media.items() if m != "multipart/form-data"}
        """The media types a Content-Type header may name as they are, without parameters."""
        self.multipart_required: list[str] = []
        form = (body.get("content") or {}).get("multipart/form-data")
        if form:
            self.multipart_required = list((form.get("schema") or {}).get("required", []))

    def _invalid(self, details: list[dict[str, Any]], message: str | None = None) -> ApiError:
        text = message or "; ".join(f"{'.'.join(map(str, d['loc']))}: {d['msg']}" for d in details)
        return ApiError(self.invalid_status, f"Invalid request: {text}", details)

    def parameters(self, request: web.Request) -> tuple[dict[str, str], dict[str, Any]]:
        if self._defaults_only and not request.query_string:  # a listing's common call: nothing to parse
            return dict(request.match_info), dict(self._query_defaults)
        path: dict[str, str] = dict(request.match_info)
        query: dict[str, Any] = {}
        problems: list[dict[str, Any]] = []
        for p in self.params:
            location = p.location
            if location == "query":
                raw = request.query.get(p.name)
            elif location == "path":
                raw = path.get(p.name)
            elif location == "header":
                raw = request.headers.get(p.name)
            else:
                continue
            if raw is None:
                if p.required:
                    problems.append(_violation([location, p.name], "Field required", "missing", None))
                elif location == "query" and p.default is not None:
                    query[p.name] = p.default
                continue
            try:
                value = raw if p.kind == "string" else _coerce(raw, p.kind)
            except ValueError:
                problems.append(
                    _violation([location, p.name], f"Input should be a valid {p.kind}", f"{p.kind}_parsing", raw)
                )
                continue
            if not p.validator.is_valid(value):  # one native call; the message only for a refusal
                for error in p.validator.iter_errors(value):
                    problems.append(_violation([location, p.name], error.message, "value_error", raw))
                    break
            if location == "query":
                query[p.name] = value
        if problems:
            raise self._invalid(problems)
        return path, query

    async def body(self, request: web.Request, preread: bytes | None = None, hostile: Hostile = REFUSES) -> Any:
        """The request's body, valid; ``preread``: the bytes a stub matched before validation has
        already read (stubs.py), which the stream no longer holds; ``hostile``: a hostile fault's
        way with it (mockserver/hostile.py)."""
        if not self.media:
            return None
        if not request.body_exists:
            if self.body_required:
                raise self._invalid([_violation(["body"], "Field required", "missing", None)])
            return None
        # A Content-Type that names a declared JSON media type exactly, the common case, needs no
        # parsing; anything else (parameters, case, multipart's boundary) is parsed by aiohttp.
        validator = self.exact_media.get(request.headers.get("Content-Type", ""))
        if validator is None:
            media_type = request.content_type
            if media_type == "multipart/form-data" and media_type in self.media:
                return await self._multipart(request, hostile.surrogates)
            validator = self.media.get(media_type)
            if validator is None:
                if media_type == "application/octet-stream" and not request.headers.get("Content-Type"):
                    validator = self.media.get("application/json")  # a client that names no type sent JSON
                if validator is None:
                    raise ApiError(415, f"Unsupported Content-Type {media_type!r}; expected {', '.join(self.media)}")
        length = request.content_length
        if length is not None and length > self.max_json_bytes:
            raise ApiError(413, f"Request body exceeds the limit of {self.max_json_bytes} bytes")
        if preread is not None and len(preread) > self.max_json_bytes:
            raise ApiError(413, f"Request body exceeds the limit of {self.max_json_bytes} bytes")
        raw = preread if preread is not None else await self._read_capped(request, length)
        exchange = request.get(EXCHANGE)
        if exchange is not None:  # the journal watches this request (hooks.py)
            exchange.read(raw)
        if not raw:  # no body; whitespace alone is a body, and not JSON (RFC 8259: ws value ws)
            if self.body_required:
                raise self._invalid([_violation(["body"], "Field required", "missing", None)])
            return None
        try:
            data = parse_json(raw, self.max_json_depth, hostile.surrogates)
        except JsonBodyError as exc:
            raise self._invalid([_violation(["body"], f"JSON decode error: {exc}", "json_invalid", None)]) from None
        if hostile.falsy_as is not None and not data:  # the fault: ``request.json() or {}``
            data = dict(hostile.falsy_as)
        if validator.is_valid(data):  # the common case: one native call, no error objects built
            return data
        problems = [
            _violation(["body", *error.instance_path], error.message[:MAX_MESSAGE], "value_error", None)
            for _, error in zip(range(10), validator.iter_errors(data), strict=False)
        ]
        raise self._invalid(problems)

    async def _read_capped(self, request: web.Request, length: int | None) -> bytes:
        """The whole body, chunk by chunk (``read(n)`` returns what has arrived, not n bytes: a
        chunked body comes in pieces), refused with 413 as soon as it passes the limit."""
        if length is not None:  # declared and within the limit (checked by the caller)
            try:
                return await request.content.readexactly(length)
            except asyncio.IncompleteReadError:
                raise self._invalid(
                    [_violation(["body"], "the body is shorter than its Content-Length", "truncated", None)]
                ) from None
        chunks: list[bytes] = []
        size = 0
        while chunk := await request.content.read(self.max_json_bytes + 1 - size):
            size += len(chunk)
            if size > self.max_json_bytes:
                raise ApiError(413, f"Request body exceeds the limit of {self.max_json_bytes} bytes")
            chunks.append(chunk)
        return b"".join(chunks)

    async def _multipart(self, request: web.Request, surrogates: Surrogates = Surrogates.REFUSED) -> dict[str, Any]:
        exchange = request.get(EXCHANGE)
        whole = exchange is not None and exchange.entry is not None and exchange.entry.request_body.limit is None
        content: Any = _Tee(request.content) if whole else request.content
        try:
            return await self._form(request, content, surrogates)
        finally:
            if isinstance(content, _Tee) and exchange is not None:
                exchange.read(bytes(content.seen))

    async def _form(
        self, request: web.Request, content: Any, surrogates: Surrogates = Surrogates.REFUSED
    ) -> dict[str, Any]:
        """The parts of a multipart body. A file name or text field that is not UTF-8 is refused
        (4xx) as the mock does; the hostile faults (``surrogates``) keep its bytes as lone
        surrogates (``surrogateescape``, as aiohttp reads part headers) or replace them by U+FFFD."""
        try:
            reader = _FormReader(request.headers, content)
        except (ValueError, AssertionError, HttpProcessingError) as exc:
            raise self._invalid([_violation(["body"], f"malformed multipart body: {exc}", "multipart", None)]) from None
        form: dict[str, Any] = {}
        total = 0
        while True:
            try:
                part = await reader.next()
            except (ValueError, AssertionError, HttpProcessingError) as exc:
                raise self._invalid(
                    [_violation(["body"], f"malformed multipart body: {exc}", "multipart", None)]
                ) from None
            if part is None:
                break
            if not isinstance(part, BodyPartReader) or not part.name:
                continue
            chunks: list[bytes] = []
            while chunk := await part.read_chunk(1 << 16):
                total += len(chunk)
                if total > self.max_upload_bytes:
                    raise ApiError(413, f"Upload exceeds the limit of {self.max_upload_bytes} bytes")
                chunks.append(chunk)
            data = b"".join(chunks)
            if part.filename is not None:
                ctype = part.headers.get("Content-Type", "application/octet-stream")
                filename = replaced(part.filename) if surrogates is Surrogates.REPLACED else part.filename
                form[part.name] = UploadedFile(filename, ctype, data)
            else:
                try:
                    form[part.name] = data.decode("utf-8", _DECODING[surrogates])
                except UnicodeDecodeError:
                    raise self._invalid(
                        [_violation(["body", part.name], "not valid UTF-8", "string_unicode", None)]
                    ) from None
        missing = [name for name in self.multipart_required if name not in form]
        if missing:
            raise self._invalid([_violation(["body", name], "Field required", "missing", None) for name in missing])
        return form
