"""How a message shows what a server sent: a JSON value as JSON (one line, cut short), an HTML page
by its one useful line, bytes that are not text as a hex excerpt.

A verdict's message is read by a vendor in a report: it quotes the server's values as the server
wrote them (``null``, ``"text"``, ``{"a": 1}``), never as this suite's Python would print them
(``None``, ``'text'``). JSON is written with ``", "`` and ``": "`` between items, as Python wrote
its values before: a finding's key digests its message with quoted values, numbers and ids blanked
(``verdicts/findings.digest``), so a failure keeps its key across the change.
"""

from __future__ import annotations

import json
import re
from html import unescape
from typing import Any

LIMIT = 200
"""Characters of a value a message shows by default."""
_TAG = re.compile(r"<[^>]*>")
_PAGE = re.compile(r"^\s*(<!doctype\s+html|<html[\s>]|<head[\s>]|<body[\s>]|<title[\s>])", re.IGNORECASE)
_ELEMENT = {
    name: re.compile(rf"<{name}\b[^>]*>(.*?)</{name}\s*>", re.IGNORECASE | re.DOTALL)
    for name in ("title", "h1", "h2", "p", "body")
}
_HIDDEN = re.compile(r"<(script|style|head)\b[^>]*>.*?</\1\s*>", re.IGNORECASE | re.DOTALL)


_BACK = 24
"""How far a cut steps back from ``limit`` to end between tokens rather than inside one."""
_ESCAPE = re.compile(r"(\\+)(?:u[0-9a-fA-F]{0,3}|x[0-9a-fA-F]?)?$")
"""The backslashes a cut text ends with, and what follows the last (``\\u00`` of ``\\u00e9``)."""


def _whole_escapes(head: str) -> str:
    """``head`` without an escape the cut split: an odd run of backslashes starts one (an even
    run is escaped backslashes, whole)."""
    found = _ESCAPE.search(head)
    if found is None or len(found.group(1)) % 2 == 0:
        return head
    return head[: found.end(1) - 1]


def _open_string(head: str) -> bool:
    """``head`` (JSON text) ends inside a string: an odd count of quotes no backslash escapes."""
    quotes, escaped = 0, False
    for ch in head:
        if escaped:
            escaped = False
        elif ch == "\\":
            escaped = True
        elif ch == '"':
            quotes += 1
    return quotes % 2 == 1


def cut(text: str, limit: int = LIMIT) -> str:
    """``text`` cut at ``limit`` characters at most, saying how long it was. The cut ends between
    tokens where one ends near the limit (after a space or a JSON separator), never inside an
    escape or a surrogate pair; a cut inside a JSON string closes it (``"abc..."``), so the
    message stays readable and a finding's digest blanks the value as it blanks a whole one."""
    if len(text) <= limit:
        return text
    head = text[:limit]
    boundary = max(head.rfind(mark) for mark in (" ", ",", ":", "[", "{"))
    if boundary > 0 and boundary >= limit - min(_BACK, limit // 4):
        head = head[: boundary + 1].rstrip() if head[boundary] != " " else head[:boundary]
    head = _whole_escapes(head)
    if head and "\ud800" <= head[-1] <= "\udbff":  # a lone high surrogate: its pair was cut off
        head = head[:-1]
    json_like = text[:1] in '{["'
    if json_like and _open_string(head):
        return f'{head}..." ({len(text)} characters)'
    return f"{head}... ({len(text)} characters)"


_LONE = re.compile("[\ud800-\udfff]")


def lone_escaped(text: str) -> str:
    """``text`` with each lone surrogate (which no UTF-8 file can hold; a hostile input's, read
    back from JSON) as its JSON escape ``\\udXXX``: JSON text stays the same value, prose stays writable."""
    return _LONE.sub(lambda m: f"\\u{ord(m.group()):04x}", text) if _LONE.search(text) else text


def _plain(value: Any) -> Any:
    """What JSON cannot write, as near as it can: a tuple or set as a list, bytes as text."""
    if isinstance(value, bytes | bytearray):
        return bytes(value).decode("utf-8", "replace")
    if isinstance(value, set | frozenset):
        return sorted(value, key=str)
    return str(value)


def shown(value: Any, limit: int = LIMIT) -> str:
    """A value as a message quotes it: JSON on one line, characters as they are, cut at ``limit``
    characters (bytes that are not UTF-8 text: a hex excerpt)."""
    if isinstance(value, bytes | bytearray) and not _is_text(bytes(value)):
        return hex_excerpt(bytes(value), limit)
    try:
        text = lone_escaped(json.dumps(value, ensure_ascii=False, default=_plain))
    except (ValueError, RecursionError):  # a circular or too deep value: Python's own words
        text = repr(value)
    return cut(text, limit)


def codepoints(text: str, limit: int = LIMIT) -> str:
    """A string as JSON with every character past ASCII escaped: where two texts look alike on
    screen, their code points show how they differ."""
    return cut(json.dumps(text, ensure_ascii=True), limit)


def _is_text(data: bytes) -> bool:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return all(ch.isprintable() or ch in "\n\r\t" for ch in text)


def hex_excerpt(data: bytes, limit: int = LIMIT) -> str:
    """Bytes that are not text: their size and the first of them in hex."""
    head = data[: max(1, limit // 3)].hex(" ")
    more = " ..." if len(data) > limit // 3 else ""
    return f"<{len(data)} bytes: {head}{more}>"


def page_line(text: str, html: bool = False) -> str | None:
    """The one useful line of an HTML page (a proxy's or framework's error page): its title, else
    its first heading, else its first text; None when ``text`` is not an HTML page (``html``: the
    answer said it is, whatever its first tag)."""
    if not (_PAGE.match(text) or (html and _TAG.search(text))):
        return None
    visible = _HIDDEN.sub(" ", text)
    for name in ("title", "h1", "h2", "p", "body"):
        source = text if name == "title" else visible
        for found in _ELEMENT[name].finditer(source):
            line = " ".join(unescape(_TAG.sub(" ", found.group(1))).split())
            if line:
                return line
    line = " ".join(unescape(_TAG.sub(" ", visible)).split())
    return line or "(an empty page)"


def body(data: bytes | str, content_type: str = "", limit: int = LIMIT) -> str:
    """An answer's body as a message shows it: JSON as ``shown`` writes it, an HTML page as its one
    useful line (``an HTML page: "502 Bad Gateway"``), other text cut short, bytes that are not
    text as a hex excerpt."""
    if isinstance(data, bytes):
        if not data:
            return "(no body)"
        if not _is_text(data):
            return hex_excerpt(data, limit)
        text = data.decode("utf-8")
    else:
        text = data
    if not text.strip():
        return "(no body)" if not text else shown(text, limit)
    line = page_line(text, html="html" in content_type.lower())
    if line is not None:
        return f"an HTML page: {shown(line, limit)}"
    try:
        return shown(json.loads(text), limit)
    except (ValueError, RecursionError):
        return shown(text, limit)
