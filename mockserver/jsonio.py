"""JSON encoding for every answer the mock sends: JSON bodies, NDJSON lines and SSE events.

orjson writes compact UTF-8 bytes in one native call, about ten times faster than ``json.dumps``
plus ``.encode()`` on the mock's bodies. It refuses two things the store can hold, integers beyond
64 bits and strings with lone surrogates (a request may carry either inside a free-form object);
those answers are encoded by the standard library instead, ASCII-escaped, so every value the mock
accepted can be sent back.
"""

from __future__ import annotations

import json
from typing import Any

import orjson


def dumps(obj: Any) -> bytes:
    try:
        return orjson.dumps(obj)
    except TypeError:
        return json.dumps(obj, separators=(",", ":")).encode()


def loads_fast(text: bytes | str) -> Any:
    """``orjson.loads``: raises ``orjson.JSONDecodeError`` (a ``ValueError``) on anything it refuses."""
    return orjson.loads(text)


def fragment(obj: Any) -> orjson.Fragment:
    """``obj`` encoded once, to be placed in later answers as it is (a cached part of a body)."""
    return orjson.Fragment(dumps(obj))
