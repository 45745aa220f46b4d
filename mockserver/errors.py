"""The mock's errors; each protocol renders them in its own shape (reply.ErrorRenderer)."""

from __future__ import annotations

from http import HTTPStatus
from typing import Any


class ApiError(Exception):
    """Raised by handlers and validation; rendered in the protocol's error shape."""

    def __init__(
        self,
        status: int,
        message: str | None = None,
        details: list[dict[str, Any]] | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        self.status = status
        self.message = message or HTTPStatus(status).phrase
        self.details = details or []
        self.headers = headers or {}
        super().__init__(self.message)
