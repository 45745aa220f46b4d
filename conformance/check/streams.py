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

from .shown import shown


class FrameError(Exception):
    """The stream is not framed as the protocol says; the message names the frame."""


@dataclass(frozen=True, slots=True)
class Frame:
    index: int
    raw: str
    value: Any
    """Parsed JSON, or None for a non-JSON SSE sentinel such as ``[DONE]``."""
    data_lines: int = 1
    """SSE: how many ``data:`` lines the event's data was joined from."""
    fields: tuple[str, ...] = ()
    """SSE: the other fields the event carried (``event``, ``id``, ``retry``, unknown names), in order;
    a reader applies them or skips them, a check of a protocol that forbids them reads them here."""
    values: tuple[str, ...] = ()
    """SSE: each of ``fields``' values, in the same order (what an event's item schema judges)."""


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


_DECODER = json.JSONDecoder(parse_constant=_reject_constant)
_EOL = re.compile(rb"\r\n|\r|\n")
_BOM = b"\xef\xbb\xbf"


class NdjsonReader:
    """Push-style NDJSON framing: ``feed`` each chunk as it arrives, then ``close``; both yield the
    frames completed so far. ``ndjson_frames`` (pull) and the proxy (push) share it."""

    def __init__(self, max_frames: int = 10_000, max_line_bytes: int = 1 << 20) -> None:
        self.max_frames = max_frames
        self.max_line_bytes = max_line_bytes
        self._pending = bytearray()
        self._index = 0
        self._line_no = 0

    def feed(self, chunk: bytes) -> Iterator[Frame]:
        if b"\n" not in chunk:
            self._pending += chunk
            if len(self._pending) > self.max_line_bytes:
                raise FrameError(
                    f"line {self._line_no + 1} is longer than {self.max_line_bytes} bytes without a newline"
                )
            return
        *lines, rest = (bytes(self._pending) + chunk).split(b"\n")
        self._pending = bytearray(rest)
        for line in lines:
            self._line_no += 1
            if len(line) > self.max_line_bytes:
                raise FrameError(f"line {self._line_no} is longer than {self.max_line_bytes} bytes")
            yield from self._objects(line, self._line_no)
        if len(self._pending) > self.max_line_bytes:
            raise FrameError(f"line {self._line_no + 1} is longer than {self.max_line_bytes} bytes without a newline")

    def close(self) -> Iterator[Frame]:
        if self._pending.strip():  # a last line without its newline still counts
            yield from self._objects(bytes(self._pending), self._line_no + 1)
        self._pending.clear()

    def _objects(self, line: bytes, line_no: int) -> Iterator[Frame]:
        for frame in _line_objects(line, line_no, self._index):
            if self._index >= self.max_frames:
                raise FrameError(f"more than {self.max_frames} frames (at line {line_no}); stopping")
            yield frame
            self._index += 1


def ndjson_frames(chunks: Iterable[bytes], max_frames: int = 10_000, max_line_bytes: int = 1 << 20) -> Iterator[Frame]:
    """Each line must hold complete JSON object(s); several objects on one line are allowed (the
    NeuroSan document says a line may carry more than one response), an object split across
    lines is not. Errors name the line (1-based), not the frame."""
    reader = NdjsonReader(max_frames, max_line_bytes)
    for chunk in chunks:
        yield from reader.feed(chunk)
    yield from reader.close()


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
            raise FrameError(f"line {line_no} is not a complete JSON object ({reason}): {shown(text[:120])}") from None
        if not isinstance(value, dict):
            raise FrameError(f"line {line_no} holds a JSON {type(value).__name__}, not an object")
        yield Frame(index, text[pos:end], value)
        index += 1
        pos = end
        while pos < len(text) and text[pos] in " \t\r":
            pos += 1


class SseReader:
    """Push-style server-sent events: ``feed`` each chunk as it arrives, then ``close``; both yield
    the events completed so far. ``sse_events`` (pull) and the proxy (push) share it."""

    def __init__(self, max_events: int = 10_000, max_event_bytes: int = 1 << 20) -> None:
        self.max_events = max_events
        self.max_event_bytes = max_event_bytes
        self._buffer = bytearray()
        self._data: list[str] = []
        self._fields: list[tuple[str, str]] = []
        self._size = 0
        self._index = 0
        self._first = True

    def feed(self, chunk: bytes) -> Iterator[Frame]:
        self._buffer += chunk
        yield from self._lines(_take_lines(self._buffer, final=False))
        if len(self._buffer) > self.max_event_bytes:
            raise FrameError(f"event {self._index + 1}: a line longer than {self.max_event_bytes} bytes")

    def close(self) -> Iterator[Frame]:
        yield from self._lines(_take_lines(self._buffer, final=True))
        unfinished = bytes(self._buffer).removeprefix(_BOM) if self._first else bytes(self._buffer)
        if self._data:
            raise FrameError(f"the stream ended inside event {self._index + 1} (no blank line after its data)")
        if unfinished.strip() and not unfinished.startswith(b":"):
            raise FrameError(
                f"the stream ended in the middle of a line (event {self._index + 1}): {shown(unfinished[:120])}"
            )

    def _lines(self, lines: list[bytes]) -> Iterator[Frame]:
        for raw in lines:
            if self._first:
                raw = raw.removeprefix(_BOM)
                self._first = False
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise FrameError(
                    f"event {self._index + 1} is not valid UTF-8 ({exc.reason} at byte {exc.start})"
                ) from None
            if line == "":
                if self._data:
                    if self._index >= self.max_events:
                        raise FrameError(f"more than {self.max_events} events; stopping")
                    yield _event(self._index, self._data, self._fields)
                    self._index += 1
                    self._data, self._size = [], 0
                self._fields = []  # a block without data dispatches nothing (WHATWG), its fields with it
                continue
            if line.startswith(":"):
                continue
            name, _, value = line.partition(":")
            if name == "data":
                value = value[1:] if value.startswith(" ") else value
                self._size += len(value) + 1
                if self._size > self.max_event_bytes:
                    raise FrameError(f"event {self._index + 1} is longer than {self.max_event_bytes} bytes")
                self._data.append(value)
            else:
                self._fields.append((name, value[1:] if value.startswith(" ") else value))


def sse_events(
    chunks: Iterable[bytes], max_events: int = 10_000, max_event_bytes: int = 1 << 20, end: str | None = None
) -> Iterator[Frame]:
    """Server-sent events per the WHATWG parsing rules (CRLF, CR or LF line ends; data lines
    joined with LF; comments and other fields skipped; a leading BOM ignored). Yields each event's
    data; JSON is parsed when it parses, else ``value`` is None. Stricter than a browser where a
    conformance verdict needs it: invalid UTF-8 and a stream that ends inside an event are errors.
    ``end``: the data of the event that terminates the stream (OpenAI's ``[DONE]``): reading stops
    after it, as the protocol's client does, whether the server then closes or leaves the
    connection open and idle."""
    reader = SseReader(max_events, max_event_bytes)
    for chunk in chunks:
        for frame in reader.feed(chunk):
            yield frame
            if end is not None and frame.raw == end:
                return
    yield from reader.close()


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


def _event(index: int, lines: list[str], fields: list[tuple[str, str]]) -> Frame:
    data = "\n".join(lines)
    try:
        value = _DECODER.decode(data)
    except ValueError:
        value = None
    return Frame(index, data, value, len(lines), tuple(n for n, _ in fields), tuple(v for _, v in fields))
