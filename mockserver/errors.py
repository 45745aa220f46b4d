"""The mock's errors, rendered in the protocol's own shape (its manifest's ``error``)."""

from __future__ import annotations

from http import HTTPStatus
from typing import Any

from specs.documents import protocol


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


def error_body(protocol_id: str, error: ApiError) -> dict[str, Any]:
    return protocol(protocol_id).error.render(error.status, error.message, error.details)
