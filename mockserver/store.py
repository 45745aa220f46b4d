"""What every protocol's store shares: a bound on the objects and bytes it holds.

A write asks ``reserve`` for room before it changes anything, so a refusal (507 in the
protocol's error shape) leaves no partial state; a delete gives the room back with ``release``.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable

from .config import MockLimits
from .errors import ApiError


class Capacity:
    """The room left in one store; ``what`` names the store in the 507 message, ``unit`` its objects."""

    def __init__(self, limits: MockLimits, what: str = "Storage", unit: str = "objects") -> None:
        self.max_objects = limits.max_stored_objects
        self.max_bytes = limits.max_stored_bytes
        self.what = what
        self.unit = unit
        self.objects = 0
        self.bytes = 0

    def reserve(self, objects: int, size: int = 0) -> None:
        if self.objects + objects > self.max_objects:
            raise ApiError(507, f"{self.what} is full ({self.max_objects} {self.unit}); delete some")
        if self.bytes + size > self.max_bytes:
            raise ApiError(507, f"{self.what} is full ({self.max_bytes} bytes); delete some")
        self.objects += objects
        self.bytes += size

    def release(self, objects: int, size: int = 0) -> None:
        self.objects -= objects
        self.bytes -= size


def new_id() -> str:
    """A random (version 4) UUID as text, the ids upstream servers hand out.

    The same 122 random bits from ``os.urandom`` as ``str(uuid.uuid4())``, formatted without
    building a ``UUID`` object: a third of its cost, and every write makes one or two.
    """
    raw = bytearray(os.urandom(16))
    raw[6] = raw[6] & 0x0F | 0x40  # version 4
    raw[8] = raw[8] & 0x3F | 0x80  # the RFC 4122 variant
    h = raw.hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def new_hex_id() -> str:
    """128 random bits as 32 hex digits (``uuid4().hex``'s length; OpenAI's completion ids)."""
    return os.urandom(16).hex()


RACE_SECONDS = 0.2
"""The await between reading and advancing a racy id (a store's round trip): creates that arrive
within it take one id."""


class RacyIds:
    """The create-race faults' ids: the next id is read, then advanced only after an await (a
    ``SELECT max(id) + 1`` and then the ``INSERT``), so creates that overlap all take the one read."""

    def __init__(self, make: Callable[[], str] = new_id) -> None:
        self._make = make
        self._next: str | None = None
        """Made at the first take: a mock without the fault draws no id for it."""

    async def take(self) -> str:
        taken = self._next if self._next is not None else self._make()
        self._next = taken
        await asyncio.sleep(RACE_SECONDS)
        self._next = self._make()
        return taken
