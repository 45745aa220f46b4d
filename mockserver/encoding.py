"""Content codings a request accepts (RFC 9110 §12.5.3), so that a stub's ``encoding`` is sent only
to a client that asked for it.

RFC 9110 §12.5.3 lets a server use any coding when a request carries no Accept-Encoding ("this
allows the server to use any content coding in a response, it does not imply that the user agent
will be able to correctly process all encodings"); the mock takes the conservative reading and
encodes only what the client named (or ``*``) with a weight above 0.
"""

from __future__ import annotations

import gzip

ALIASES = {"x-gzip": "gzip"}
"""RFC 9110 §8.4.1.3: 'A recipient SHOULD consider "x-gzip" to be equivalent to "gzip".'"""


def _weights(header: str) -> dict[str, float]:
    weights: dict[str, float] = {}
    for item in header.split(","):
        name, *params = (part.strip() for part in item.split(";"))
        if not name:
            continue
        weight = 1.0
        for param in params:
            key, _, value = param.partition("=")
            if key.strip().lower() == "q":
                try:
                    weight = float(value)
                except ValueError:
                    weight = 0.0  # a weight that does not parse accepts nothing
        name = name.lower()
        weights[ALIASES.get(name, name)] = weight
    return weights


def accepts(header: str | None, coding: str) -> bool:
    """Whether ``Accept-Encoding: header`` accepts ``coding`` (named, or by ``*``, with q > 0)."""
    if not header:
        return False
    weights = _weights(header)
    weight = weights.get(coding, weights.get("*", 0.0))
    return weight > 0


def encode(data: bytes, coding: str) -> bytes:
    """``data`` in ``coding`` (gzip without a timestamp: the same body gives the same bytes)."""
    assert coding == "gzip", coding
    return gzip.compress(data, mtime=0)
