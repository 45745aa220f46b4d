"""POSIX ``cksum``, so a report and a shell script identify the same bytes the same way."""

from __future__ import annotations


def _crc_table() -> list[int]:
    table = []
    for i in range(256):
        c = i << 24
        for _ in range(8):
            c = ((c << 1) ^ 0x04C11DB7) if c & 0x80000000 else c << 1
        table.append(c & 0xFFFFFFFF)
    return table


_CRC = _crc_table()
CKSUM_LIMIT = 1 << 20
"""Bytes of an answer a checksum is computed for (larger binary answers are compared by size)."""


def cksum(data: bytes) -> str:
    """``CRC SIZE`` exactly as POSIX ``cksum`` prints it for ``data`` on its standard input."""
    if len(data) > CKSUM_LIMIT:
        return f"- {len(data)}"
    crc = 0
    for byte in data:
        crc = ((crc << 8) & 0xFFFFFFFF) ^ _CRC[((crc >> 24) ^ byte) & 0xFF]
    n = len(data)
    while n:
        crc = ((crc << 8) & 0xFFFFFFFF) ^ _CRC[((crc >> 24) ^ (n & 0xFF)) & 0xFF]
        n >>= 8
    return f"{~crc & 0xFFFFFFFF} {len(data)}"
