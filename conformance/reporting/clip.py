"""Text cut short for a report or the console: at a word boundary, with an ellipsis, so a reader
sees that something was left out and never half a token that looks whole (``/ap/v1/ag``)."""

from __future__ import annotations

import re

ELLIPSIS = "…"
_SPACE = re.compile(r"\s")


def clip(text: str, limit: int) -> str:
    """``text`` when it fits in ``limit`` characters, else its words that fit and ``…`` (the
    ellipsis counted). A token longer than half the room (a JSON value, a URL) is cut inside,
    still with the ellipsis: cutting before it would leave too little to read."""
    if len(text) <= limit:
        return text
    room = text[: max(limit - 1, 0)]
    if limit > 1 and not _SPACE.match(text[limit - 1]):  # the cut falls inside a word: go back to its start
        spaces = [m.start() for m in _SPACE.finditer(room)]
        if spaces and spaces[-1] >= len(room) // 2:
            room = room[: spaces[-1]]
    return room.rstrip(" \t\r\n,;:") + ELLIPSIS
