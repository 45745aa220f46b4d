"""The edge corpus: hard values every round-trip and echo check sends, every run, whatever the seed.

Generated cases find what their draws happen to reach; the values here are the ones a server gets
wrong most often (encodings, normalisation, escaping, sizes, names a file system treats specially,
collisions), so they are data, sent by every check that reads back what it wrote. Each value has a
name, and a verdict about it names the value ("CJK text", "dot-leading name"), never only "the
input".

``refusable`` marks a value the document lets a server refuse with a 4xx (a size or name limit it
may have, a name that collides with another): refused, it passes; accepted, it must come back
whole. Everything else must be accepted and come back exactly as sent.
"""

from __future__ import annotations

import random
import unicodedata
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from .shown import codepoints, shown

T = TypeVar("T")

LONG_CHARS = 64 * 1024
"""Characters of the long text: past the 16-bit and 64 KiB boundaries where columns and buffers cut."""
NAME_BYTES = 255
"""The longest file name most file systems store (NAME_MAX): a server that keeps names on disk
may refuse a longer one, but this one it can store."""
MIB = 1 << 20


@dataclass(frozen=True, slots=True)
class Edge(Generic[T]):
    name: str
    """What a verdict calls the value."""
    value: T
    refusable: bool = False
    """The document lets a server refuse it with a 4xx (a limit or a collision it may have)."""


def _long_text(chars: int) -> str:
    """Text whose every position is recognisable: a truncation, a dropped or doubled block shows
    where it happened. Mixed widths (1 to 4 UTF-8 bytes), so a cut by bytes and one by characters differ."""
    block = "0123456789 abcdef \u00e9\u00e8 \u4e2d\u6587 \U0001f680 |"
    blocks = chars // (len(block) + 7) + 1
    return "".join(f"[{n:05d}]{block}" for n in range(blocks))[:chars]


TEXTS: tuple[Edge[str], ...] = (
    Edge(
        "Latin-1 text (precomposed accents)",
        "caf\u00e9 na\u00efve \u00c6r\u00f8 stra\u00dfe \u00bf\u00a1 \u00a9\u00b0\u00b1\u00b5",
    ),
    Edge("CJK text", "\u4e2d\u6587\u6e2c\u8a66 \u65e5\u672c\u8a9e\u306e\u30c6\u30ad\u30b9\u30c8 \ud55c\uad6d\uc5b4"),
    Edge(
        "right-to-left text",
        "\u0645\u0631\u062d\u0628\u0627 \u0628\u0627\u0644\u0639\u0627\u0644\u0645 "
        "\u200f\u05e9\u05dc\u05d5\u05dd \u05e2\u05d5\u05dc\u05dd",
    ),
    Edge("combining marks (decomposed, NFD)", "cafe\u0301 Zu\u0308rich n\u0303 a\u030a Z\u0335\u0321"),
    Edge(
        "emoji and astral characters",
        "\U0001f680 \U0001f469\u200d\U0001f4bb \U0001f1eb\U0001f1f7 \U0001f44d\U0001f3fd "
        "\U0001d518\U0001d52b \U0002070e",
    ),
    Edge("JSON-special characters", 'quote " backslash \\ slash / </script> \\u0041 {"a": [1]}'),
    Edge("control characters", "tab\there\nnew line\r\nbell\x07 escape\x1b unit\x1f del\x7f \u2028\u2029"),
    Edge("spaces at both ends", "  padded on both sides \t "),
    Edge("empty text", "", refusable=True),
    Edge("NUL character", "before\x00after", refusable=True),
    Edge(f"long text ({LONG_CHARS // 1024} Ki characters)", _long_text(LONG_CHARS), refusable=True),
)
"""Text for every string a protocol echoes. The refusable ones: an empty message, a NUL (many
stores cannot hold it) and 64 Ki characters (a size limit) may be refused with a 4xx."""

SHORT_TEXTS = tuple(e for e in TEXTS if len(e.value) < 256)
"""The corpus without the long text, for places where one value stands for many (object keys)."""


def text(name: str) -> Edge[str]:
    return next(e for e in TEXTS if e.name == name)


def json_values() -> dict[str, object]:
    """One JSON object holding every short text as a value and as a key, and the JSON values that
    lose precision or shape in common stores, each under a key that names it."""
    values: dict[str, object] = {e.name: e.value for e in SHORT_TEXTS}
    values.update({e.value: f"as a key: {e.name}" for e in SHORT_TEXTS})
    values.update(
        {
            "integer beyond 2^53": 2**53 + 1,
            "64-bit integer": -(2**63),
            "small float": 1e-7,
            "float with many digits": 0.1 + 0.2,
            "negative zero": -0.0,
            "empty array": [],
            "empty object": {},
            "null": None,
            "booleans": [True, False],
            "nested 16 deep": _nested(16),
        }
    )
    return values


def _nested(depth: int) -> object:
    value: object = "bottom"
    for n in range(depth):
        value = {"level": depth - n, "inner": [value]}
    return value


@dataclass(frozen=True, slots=True)
class Upload:
    """One file a client uploads: the name it gives, the folder (``relative_path``), the bytes."""

    name: str
    file_name: str
    relative_path: str | None
    data: bytes
    refusable: bool = False


def binary(seed: int, size: int) -> bytes:
    """Every byte value, NUL and 0xFF runs, a multipart-looking line, then seeded random bytes."""
    head = bytes(range(256)) + b"\x00" * 16 + b"\xff" * 16 + b"\r\n--boundary--\r\n"
    return (head + random.Random(seed).randbytes(max(0, size - len(head))))[: max(size, len(head))]


def uploads(seed: int) -> tuple[Upload, ...]:
    """The files the artifact round trips upload to one task, in this order. ``seed`` only varies
    the random bytes; the names, sizes and order are the same every run."""
    long_name = "n" * (NAME_BYTES - 4) + ".txt"
    return (
        Upload("UTF-8 name", "r\u00e9sum\u00e9 \u4e2d\u6587 \U0001f680.txt", None, b"utf-8 name\n"),
        Upload("decomposed (NFD) name", "cafe\u0301 menu.txt", None, b"nfd name\n"),
        Upload("dot-leading name", ".env", None, b"KEY=value\n"),
        Upload("name without extension", "README", None, b"no extension\n"),
        # no double quote: form encoders send it as %22, which a server cannot tell from a literal %22
        Upload("name with spaces, an apostrophe, ; and =", "my file's name; v=2 (copy).txt", None, b"punctuation\n"),
        Upload(f"{NAME_BYTES}-byte name", long_name, None, b"long name\n", refusable=True),
        Upload("UTF-8 relative_path", "nested.txt", "donn\u00e9es/\u5b50\u76ee\u5f55", b"utf-8 folder\n"),
        Upload("empty file", "empty.bin", None, b""),
        Upload("binary with NUL bytes", "payload.bin", "inputs/raw", binary(seed, 4096)),
        Upload("1 MiB file", "large.bin", None, binary(seed + 1, MIB)),
        Upload("same name, first upload", "twice.txt", "same", b"first upload of twice.txt\n"),
        Upload("same name, second upload", "twice.txt", "same", b"second upload, other bytes\n", refusable=True),
        Upload("a file named docs", "docs", None, b"a file called docs\n"),
        Upload("relative_path docs, the name of a file", "inside.txt", "docs", b"in folder docs\n", refusable=True),
        Upload("a file in folder lib", "inside.txt", "lib", b"in folder lib\n"),
        Upload("a file named lib, the name of a folder", "lib", None, b"a file called lib\n", refusable=True),
    )


# --- judging an echo --------------------------------------------------------------------------------


EXACT_INTEGERS = 2**53
"""I-JSON's interoperable integers (RFC 7493 section 2.2): beyond them an integer is exact only in
stores that keep more than IEEE 754 binary64."""


def same_number(a: float, b: float) -> bool:
    """Two JSON numbers a server may return for each other: equal, or equal once both are read as
    IEEE 754 binary64. RFC 8259 section 6 lets an implementation limit the range and precision of
    the numbers it accepts and expects binary64 for interoperability (I-JSON, RFC 7493 section 2.2):
    a server storing doubles returns 2^53 + 1 as 2^53 and 0.1 + 0.2 as the double it is, and loses
    nothing the document can hold it to. Precision lost within binary64 (a 32-bit float, a decimal
    cut to 6 digits) still differs."""
    if a == b:
        return True
    try:
        return float(a) == float(b)
    except OverflowError:  # an integer beyond binary64's range: no double stands for it
        return False


def same(a: Any, b: Any) -> bool:
    """JSON equality that tells booleans from numbers (Python's ``True == 1`` would hide a change),
    and numbers at the precision the RFCs let a server keep (``same_number``); key order is no part
    of a JSON object (RFC 8259 section 4), so it is not compared."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return same_number(a, b)
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and bool(a == b)


def brief(value: Any, limit: int = 80) -> str:
    """A value as JSON cut to ``limit`` characters, saying how long it was (a 64 Ki value stays readable)."""
    return shown(value, limit)


def text_difference(got: str, sent: str) -> str:
    """How a text echo differs: normalised, trimmed, cut, or where it first differs, in code points
    where the two would look alike on screen."""
    for form in ("NFC", "NFD"):
        if got != sent and got == unicodedata.normalize(form, sent):
            return f"came back normalised to {form}: sent {codepoints(sent, 120)}, got {codepoints(got, 120)}"
    if got == sent.strip():
        return f"came back with the whitespace at its ends trimmed: sent {brief(sent)}, got {brief(got)}"
    at = next((i for i, (x, y) in enumerate(zip(got, sent, strict=False)) if x != y), min(len(got), len(sent)))
    window = slice(max(0, at - 10), at + 20)
    cut = " (cut short)" if sent.startswith(got) else ""
    return (
        f"came back as {len(got)} characters for the {len(sent)} sent{cut}, first differing at character {at}: "
        f"sent {codepoints(sent[window])}, got {codepoints(got[window])}"
    )


def difference(got: Any, sent: Any) -> str:
    """How an echo differs from what was sent, short enough to read whatever the size of the value:
    for objects the members that differ, for text the first position that differs."""
    if isinstance(got, dict) and isinstance(sent, dict):
        keys = [k for k in {**sent, **got} if k not in got or k not in sent or not same(got[k], sent[k])]
        shown = "; ".join(
            f"{brief(k, 60)}: sent {brief(sent.get(k, '(absent)'))}, got {brief(got.get(k, '(absent)'))}"
            for k in keys[:4]
        )
        return f"differs from what was sent in {len(keys)} member(s): {shown}"
    if isinstance(got, str) and isinstance(sent, str):
        return text_difference(got, sent)
    return f"{brief(got, 200)} is not the {brief(sent, 200)} sent"
