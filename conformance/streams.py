"""Incremental, bounded frame readers: NDJSON (one JSON object per line) and server-sent events.

They consume chunks as they arrive and yield each frame as soon as it is complete, so a check
validates frame by frame and a target that stalls mid-stream is caught at the frame it stalls on.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any


class FrameError(Exception):
    """The stream is not framed as the protocol says; the message names the frame."""


@dataclass(frozen=True, slots=True)
class Frame:
    index: int
    raw: str
    value: Any
    """Parsed JSON, or None for a non-JSON SSE sentinel such as ``[DONE]``."""


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


_DECODER = json.JSONDecoder(parse_constant=_reject_constant)
_EOL = re.compile(rb"\r\n|\r|\n")
_BOM = b"\xef\xbb\xbf"


def ndjson_frames(chunks: Iterable[bytes], max_frames: int = 10_000, max_line_bytes: int = 1 << 20) -> Iterator[Frame]:
    """Each line must hold complete JSON object(s); several objects on one line are allowed (the
    NeuroSan document says a line may carry more than one response), an object split across
    lines is not. Errors name the line (1-based), not the frame."""
    pending = bytearray()
    index = 0
    line_no = 0
    for chunk in chunks:
        if b"\n" not in chunk:
            pending += chunk
            if len(pending) > max_line_bytes:
                raise FrameError(f"line {line_no + 1} is longer than {max_line_bytes} bytes without a newline")
            continue
        *lines, rest = (bytes(pending) + chunk).split(b"\n")
        pending = bytearray(rest)
        for line in lines:
            line_no += 1
            if len(line) > max_line_bytes:
                raise FrameError(f"line {line_no} is longer than {max_line_bytes} bytes")
            for frame in _line_objects(line, line_no, index):
                if index >= max_frames:
                    raise FrameError(f"more than {max_frames} frames (at line {line_no}); stopping")
                yield frame
                index += 1
        if len(pending) > max_line_bytes:
            raise FrameError(f"line {line_no + 1} is longer than {max_line_bytes} bytes without a newline")
    if pending.strip():  # a last line without its newline still counts
        for frame in _line_objects(bytes(pending), line_no + 1, index):
            if index >= max_frames:
                raise FrameError(f"more than {max_frames} frames (at line {line_no + 1}); stopping")
            yield frame
            index += 1


def _line_objects(line: bytes, line_no: int, index: int) -> Iterator[Frame]:
    try:
        text = line.decode("utf-8").strip()
    except UnicodeDecodeError as exc:
        raise FrameError(f"line {line_no} is not valid UTF-8 ({exc.reason} at byte {exc.start})") from None
    if not text:
        return
    pos = 0
    while pos < len(text):
        try:
            value, end = _DECODER.raw_decode(text, pos)
        except (json.JSONDecodeError, ValueError) as exc:
            reason = exc.msg if isinstance(exc, json.JSONDecodeError) else str(exc)
            raise FrameError(
                f"line {line_no} is not a complete JSON object ({reason}): {text[:120]!r}"
            ) from None
        if not isinstance(value, dict):
            raise FrameError(f"line {line_no} holds a JSON {type(value).__name__}, not an object")
        yield Frame(index, text[pos:end], value)
        index += 1
        pos = end
        while pos < len(text) and text[pos] in " \t\r":
            pos += 1


def sse_events(chunks: Iterable[bytes], max_events: int = 10_000, max_event_bytes: int = 1 << 20) -> Iterator[Frame]:
    """Server-sent events per the WHATWG parsing rules (CRLF, CR or LF line ends; data lines
    joined with LF; comments and other fields skipped; a leading BOM ignored). Yields each event's
    data; JSON is parsed when it parses, else ``value`` is None. Stricter than a browser where a
    conformance verdict needs it: invalid UTF-8 and a stream that ends inside an event are errors."""
    buffer = bytearray()
    data: list[str] = []
    size = 0
    index = 0
    first = True

    def feed(lines: list[bytes]) -> Iterator[Frame]:
        nonlocal data, size, index, first
        for raw in lines:
            if first:
                raw = raw.removeprefix(_BOM)
                first = False
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise FrameError(f"event {index + 1} is not valid UTF-8 ({exc.reason} at byte {exc.start})") from None
            if line == "":
                if data:
                    if index >= max_events:
                        raise FrameError(f"more than {max_events} events; stopping")
                    yield _event(index, "\n".join(data))
                    index += 1
                    data, size = [], 0
                continue
            if line.startswith(":"):
                continue
            name, _, value = line.partition(":")
            if name == "data":
                value = value[1:] if value.startswith(" ") else value
                size += len(value) + 1
                if size > max_event_bytes:
                    raise FrameError(f"event {index + 1} is longer than {max_event_bytes} bytes")
                data.append(value)

    for chunk in chunks:
        buffer += chunk
        yield from feed(_take_lines(buffer, final=False))
        if len(buffer) > max_event_bytes:
            raise FrameError(f"event {index + 1}: a line longer than {max_event_bytes} bytes")
    yield from feed(_take_lines(buffer, final=True))
    unfinished = bytes(buffer).removeprefix(_BOM) if first else bytes(buffer)
    if data:
        raise FrameError(f"the stream ended inside event {index + 1} (no blank line after its data)")
    if unfinished.strip() and not unfinished.startswith(b":"):
        raise FrameError(f"the stream ended in the middle of a line (event {index + 1}): {unfinished[:120]!r}")


def _take_lines(buffer: bytearray, final: bool) -> list[bytes]:
    """Remove and return the complete lines at the start of ``buffer``. A CR at the very end is
    held back until the stream ends (a LF may follow in the next chunk)."""
    lines: list[bytes] = []
    pos = 0
    for match in _EOL.finditer(buffer):
        if not final and match.end() == len(buffer) and match.group() == b"\r":
            break
        lines.append(bytes(buffer[pos : match.start()]))
        pos = match.end()
    del buffer[:pos]
    return lines


def _event(index: int, data: str) -> Frame:
    try:
        value = _DECODER.decode(data)
    except ValueError:
        value = None
    return Frame(index, data, value)
