"""What every protocol's store shares: a bound on the objects and bytes it holds.

A write asks ``reserve`` for room before it changes anything, so a refusal (507 in the
protocol's error shape) leaves no partial state; a delete gives the room back with ``release``.
"""

from __future__ import annotations

from .config import Limits
from .errors import ApiError


class Capacity:
    """The room left in one store; ``what`` names the store in the 507 message, ``unit`` its objects."""

    def __init__(self, limits: Limits, what: str = "Storage", unit: str = "objects") -> None:
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
