"""Incremental, bounded frame readers: NDJSON (one JSON object per line) and server-sent events.

They consume chunks as they arrive and yield each frame as soon as it is complete, so a check
validates frame by frame and a target that stalls mid-stream is caught at the frame it stalls on.
"""

from __future__ import annotations

import json
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


def ndjson_frames(chunks: Iterable[bytes], max_frames: int = 10_000, max_line_bytes: int = 1 << 20) -> Iterator[Frame]:
    """Each line must hold complete JSON object(s); several objects on one line are allowed (the
    NeuroSan document says a line may carry more than one response), an object split across
    lines is not."""
    buffer = b""
    index = 0
    for chunk in chunks:
        buffer += chunk
        while b"\n" in buffer:
            line, buffer = buffer.split(b"\n", 1)
            for frame in _line_objects(line, index):
                yield frame
                index += 1
                if index > max_frames:
                    raise FrameError(f"more than {max_frames} frames; stopping")
        if len(buffer) > max_line_bytes:
            raise FrameError(f"a line longer than {max_line_bytes} bytes without a newline")
    if buffer.strip():
        yield from _line_objects(buffer, index)


def _line_objects(line: bytes, index: int) -> Iterator[Frame]:
    try:
        text = line.decode("utf-8").strip()
    except UnicodeDecodeError as exc:
        raise FrameError(f"line {index + 1} is not valid UTF-8 ({exc.reason})") from None
    if not text:
        return
    decoder = json.JSONDecoder()
    pos = 0
    while pos < len(text):
        try:
            value, end = decoder.raw_decode(text, pos)
        except json.JSONDecodeError as exc:
            raise FrameError(f"line {index + 1} is not a complete JSON object ({exc.msg}): {text[:120]!r}") from None
        if not isinstance(value, dict):
            raise FrameError(f"line {index + 1} holds a JSON {type(value).__name__}, not an object")
        yield Frame(index, text[pos:end], value)
        index += 1
        pos = end
        while pos < len(text) and text[pos] in " \t\r":
            pos += 1


def sse_events(chunks: Iterable[bytes], max_frames: int = 10_000, max_event_bytes: int = 1 << 20) -> Iterator[Frame]:
    """Server-sent events per the WHATWG parsing rules (data lines joined, comments skipped).
    Yields each event's data; JSON is parsed when it parses, else ``value`` is None."""
    buffer = b""
    data: list[str] = []
    index = 0
    for chunk in chunks:
        buffer += chunk
        while True:
            cut = _line_end(buffer)
            if cut is None:
                break
            line_bytes, buffer = buffer[: cut[0]], buffer[cut[1] :]
            try:
                line = line_bytes.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise FrameError(f"event {index + 1} is not valid UTF-8 ({exc.reason})") from None
            if line == "":
                if data:
                    yield _event(index, "\n".join(data))
                    index += 1
                    data = []
                    if index > max_frames:
                        raise FrameError(f"more than {max_frames} events; stopping")
                continue
            if line.startswith(":"):
                continue
            field, _, value = line.partition(":")
            if field == "data":
                data.append(value[1:] if value.startswith(" ") else value)
        if len(buffer) > max_event_bytes:
            raise FrameError(f"an event line longer than {max_event_bytes} bytes")
    if data:
        raise FrameError(f"the stream ended inside event {index + 1} (no blank line after its data)")


def _line_end(buffer: bytes) -> tuple[int, int] | None:
    """(end of line, start of next) for the first CR, LF or CRLF; None until a line is complete."""
    lf, cr = buffer.find(b"\n"), buffer.find(b"\r")
    if cr == -1 or (lf != -1 and lf < cr):
        return None if lf == -1 else (lf, lf + 1)
    if cr + 1 == len(buffer):
        return None  # a LF may follow in the next chunk
    return (cr, cr + 2) if buffer[cr + 1 : cr + 2] == b"\n" else (cr, cr + 1)


def _event(index: int, data: str) -> Frame:
    try:
        value = json.loads(data)
    except ValueError:
        value = None
    return Frame(index, data, value)
