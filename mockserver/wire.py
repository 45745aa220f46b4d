"""How the mock writes its answers on the wire, within the latitude HTTP, JSON and SSE give a server.

The passing controls of the wire (``wire_controls``, in every protocol's catalogue) each pick one
choice the RFCs under the documents leave to a server, so a suite that holds a server to the mock's
own habits fails a control: JSON with whitespace, its members in another order and its non-ASCII
escaped (RFC 8259 sections 2, 4 and 7); a media type with parameters or in another case (RFC 9110
section 8.3.1); header names in lower case (RFC 9110 section 5.1); a body sent chunked rather than
with a Content-Length (RFC 9112 section 6); SSE lines ended by CRLF or CR, comment lines, ``id:``
and ``retry:`` fields (the WHATWG HTML standard, "Server-sent events"); and a connection held open
idle after a stream's terminator (``[DONE]`` ends an OpenAI stream, not the connection's close).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, fields, replace
from typing import Any

from aiohttp import web

from .jsonio import dumps


@dataclass(frozen=True, slots=True)
class Wire:
    """One way of writing answers; the default (``PLAIN``) is the mock's compact habit."""

    spaced_json: bool = False
    """JSON bodies and stream frames indented, members in reverse order, non-ASCII as \\u escapes."""
    media_type_parameters: bool = False
    """Every Content-Type with ``; charset=utf-8``."""
    media_type_case: bool = False
    """Every Content-Type's type in capitals (``Application/JSON``)."""
    lower_header_names: bool = False
    """The header names the mock sets, in lower case."""
    chunked: bool = False
    """JSON bodies sent with Transfer-Encoding: chunked, no Content-Length."""
    sse_line_end: str = "\n"
    """What ends an SSE line: LF, CRLF or CR."""
    sse_extras: bool = False
    """A comment line before every event, each event with an ``id:``, the first with ``retry:``."""
    idle_after_done: bool = False
    """After ``[DONE]`` the connection stays open, sending nothing, until the client leaves."""

    def __or__(self, other: Wire) -> Wire:
        """Two faults' choices at once (a combination of controls)."""
        changed = {
            f.name: getattr(other, f.name) for f in fields(other) if getattr(other, f.name) != getattr(PLAIN, f.name)
        }
        return replace(self, **changed)

    # --- what the writers ask ---------------------------------------------------------------------

    def json(self, obj: Any, one_line: bool = False) -> bytes:
        """``obj`` as JSON; ``one_line`` for a stream's frame (an NDJSON line, an SSE data line)."""
        if not self.spaced_json:
            return dumps(obj)
        obj = json.loads(dumps(obj))  # plain values: cached parts of a body (orjson fragments) spelt out
        if one_line:
            return json.dumps(_reversed(obj), separators=(" , ", " : ")).encode()
        return json.dumps(_reversed(obj), indent=2).encode() + b"\n"

    def media_type(self, value: str) -> str:
        if self.media_type_case:
            kind, _, rest = value.partition("/")
            value = f"{kind.capitalize()}/{rest.upper()}"
        if self.media_type_parameters and "charset" not in value.lower():
            value += "; charset=utf-8"
        return value

    def headers(self, headers: dict[str, str]) -> dict[str, str]:
        edited = {k: self.media_type(v) if k.lower() == "content-type" else v for k, v in headers.items()}
        return {k.lower(): v for k, v in edited.items()} if self.lower_header_names else edited

    def sse_event(self, data: bytes, number: int) -> bytes:
        """One event whose data is ``data`` (a single line), framed as this wire frames it."""
        end = self.sse_line_end.encode()
        if not self.sse_extras:
            return b"data: " + data + end + end
        retry = b"retry: 3000" + end if number == 0 else b""
        return b": keep-alive" + end + retry + f"id: {number + 1}".encode() + end + b"data: " + data + end + end

    def response(self, body: bytes, status: int, headers: dict[str, str]) -> web.Response:
        response = web.Response(body=body, status=status, headers=self.headers(headers))
        if self.chunked:
            response.enable_chunked_encoding()
        return response


PLAIN = Wire()
WIRE = web.RequestKey("mockserver.wire", Wire)
"""Set on a request whose answer is written otherwise than ``PLAIN`` (a stream reads it)."""


def _reversed(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _reversed(value[k]) for k in reversed(list(value))}
    return [_reversed(v) for v in value] if isinstance(value, list) else value


CONTROLS: tuple[tuple[str, str, Wire, bool], ...] = (
    (
        "json-spaced",
        "JSON answers indented, their members in reverse order and non-ASCII as \\u escapes (RFC 8259 sections "
        "2, 4 and 7 make all three insignificant)",
        Wire(spaced_json=True),
        False,
    ),
    (
        "media-type-charset",
        "every Content-Type carries ; charset=utf-8 (a media type's parameters, RFC 9110 section 8.3.1)",
        Wire(media_type_parameters=True),
        False,
    ),
    (
        "media-type-case",
        "every Content-Type's type is in capitals, Application/JSON (case-insensitive, RFC 9110 section 8.3.1)",
        Wire(media_type_case=True),
        False,
    ),
    (
        "header-names-lower",
        "the header names the server sets are in lower case (case-insensitive, RFC 9110 section 5.1)",
        Wire(lower_header_names=True),
        False,
    ),
    (
        "chunked",
        "JSON answers are sent chunked, without Content-Length (either framing, RFC 9112 section 6)",
        Wire(chunked=True),
        False,
    ),
    (
        "sse-crlf",
        "SSE lines end with CRLF (the SSE standard allows CRLF, LF and CR)",
        Wire(sse_line_end="\r\n"),
        True,
    ),
    (
        "sse-cr",
        "SSE lines end with a lone CR (the SSE standard allows CRLF, LF and CR)",
        Wire(sse_line_end="\r"),
        True,
    ),
    (
        "sse-comments-id-retry",
        "every SSE event follows a comment line (: keep-alive) and carries an id: field, the first a retry: "
        "field too (the SSE standard's fields every reader applies or skips; no event data changes)",
        Wire(sse_extras=True),
        True,
    ),
    (
        "sse-idle-after-done",
        "after data: [DONE] the connection stays open, idle, until the client leaves ([DONE] ends the stream: "
        "the OpenAI client stops reading there)",
        Wire(idle_after_done=True),
        True,
    ),
)
"""(name without the protocol's prefix, what it does, its wire, whether it concerns SSE alone)."""
