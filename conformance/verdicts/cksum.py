"""POSIX ``cksum``, so a report and a shell script identify the same bytes the same way."""

from __future__ import annotations

import zlib

_REVERSED = bytes(int(f"{i:08b}"[::-1], 2) for i in range(256))
"""Each byte with its bits in reverse order."""
CKSUM_LIMIT = 1 << 20
"""Bytes of an answer a checksum is computed for (larger binary answers are compared by size)."""


def cksum(data: bytes) -> str:
    """``CRC SIZE`` exactly as POSIX ``cksum`` prints it for ``data`` on its standard input: the
    CRC of the bytes followed by their count (least significant byte first, as many as it needs).

    POSIX's CRC shifts bits out at the top; zlib's runs the same polynomial bit-reversed, so the
    bytes go in bit-reversed and the register comes out reversed (C speed: a per-byte Python loop
    cost 0.1 s of CPU per megabyte, and every binary answer of a run is summed)."""
    if len(data) > CKSUM_LIMIT:
        return f"- {len(data)}"
    count, n = bytearray(), len(data)
    while n:
        count.append(n & 0xFF)
        n >>= 8
    # zlib.crc32 starts its register at ``value`` xor 0xFFFFFFFF and xors the end with it: POSIX's
    # register starts at 0 and is complemented at the end
    register = zlib.crc32((data + bytes(count)).translate(_REVERSED), 0xFFFFFFFF) ^ 0xFFFFFFFF
    crc = int(f"{register:032b}"[::-1], 2)
    return f"{~crc & 0xFFFFFFFF} {len(data)}"
