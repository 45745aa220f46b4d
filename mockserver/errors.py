"""Each protocol's error body in one table, so every rejection speaks the protocol's own shape."""

from __future__ import annotations

from collections.abc import Callable
from http import HTTPStatus
from typing import Any

# gRPC canonical codes for the HTTP statuses NeuroSan's Status bodies are sent with.
_GRPC_CODES = {400: 3, 401: 16, 403: 7, 404: 5, 405: 12, 409: 6, 413: 8, 415: 3, 422: 3, 429: 8, 501: 12, 503: 14}

ErrorBody = Callable[[int, str, list[dict[str, Any]]], dict[str, Any]]


def _agent_protocol(status: int, message: str, details: list[dict[str, Any]]) -> dict[str, Any]:
    # 404 bodies are {"message"}; 422 bodies may be any object: we add the violations.
    return {"message": message, "errors": details} if details else {"message": message}


def _neuro_san(status: int, message: str, details: list[dict[str, Any]]) -> dict[str, Any]:
    body: dict[str, Any] = {"code": _GRPC_CODES.get(status, 2), "message": message}
    if details:
        body["details"] = [{"@type": "type.googleapis.com/google.rpc.BadRequest", **d} for d in details]
    return body


def _sgr(status: int, message: str, details: list[dict[str, Any]]) -> dict[str, Any]:
    # FastAPI's shapes: 422 carries a list of {type, loc, msg, input}; the rest a string.
    if status == 422 and details:
        return {"detail": details}
    return {"detail": message}


def _synapse(status: int, message: str, details: list[dict[str, Any]]) -> dict[str, Any]:
    return {"concreteType": "org.sagebionetworks.repo.model.ErrorResponse", "reason": message}


ERROR_BODIES: dict[str, ErrorBody] = {
    "agent-protocol": _agent_protocol,
    "neuro-san": _neuro_san,
    "sgr-agent-core": _sgr,
    "synapse-agent": _synapse,
}

# The status a protocol uses for a malformed request body.
INVALID_BODY_STATUS: dict[str, int] = {
    "agent-protocol": 422,
    "neuro-san": 400,
    "sgr-agent-core": 422,
    "synapse-agent": 400,
}


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
    return ERROR_BODIES[protocol_id](error.status, error.message, error.details)
