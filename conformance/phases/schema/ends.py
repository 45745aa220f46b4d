"""An event stream read by the property-based phase ends at its protocol's end event.

schemathesis reads an event stream until the connection closes (or its time bound passes, which
the stall guard counts a stall). A protocol whose streams end with an event (OpenAI's ``data:
[DONE]``, the manifest's ``stream_end``) lets its server leave the connection open and idle after
it: its client stops reading there. ``EndedAtEvent`` stands in for the answer's raw body, frames
what schemathesis reads with the scenario checks' reader (check/streams.py) and reports the end of
the body once the end event has come, so such a stream has ended, not stalled. A stream that idles
before its end event is still cut short by the bound, a stall as before.
"""

from __future__ import annotations

from typing import Any

from ...check.streams import FrameError, SseReader


class EndedAtEvent:
    """``response.raw`` with ``read1`` returning nothing once the event whose data is ``end`` has
    come (the rest of the chunk that carried it is still returned: what follows it is the events'
    judgment's to see); everything else is the raw body's own."""

    def __init__(self, raw: Any, end: str) -> None:
        self._raw = raw
        self._end = end
        self._reader: SseReader | None = SseReader()
        self.ended = False

    def read1(self, amt: int | None = None, decode_content: bool | None = None) -> bytes:
        if self.ended:
            return b""
        chunk: bytes = self._raw.read1(amt, decode_content=decode_content)
        if chunk and self._reader is not None:
            try:
                self.ended = any(frame.raw == self._end for frame in self._reader.feed(chunk))
            except FrameError:
                self._reader = None  # not framed as events: read to the close, as schemathesis does
        return chunk

    def __getattr__(self, name: str) -> Any:
        return getattr(self._raw, name)


def end_at_event(response: Any, end: str | None) -> None:
    """Make ``response``'s event stream end at the event whose data is ``end`` (None: at the close)."""
    if end is not None:
        response.raw = EndedAtEvent(response.raw, end)
