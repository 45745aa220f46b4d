"""What a handler answers (``Reply``), and each protocol's error renderer, bound once.

``Reply`` lives here, below ``faults``, so that a fault's edit of an answer is typed
(``Mutation = Callable[[Reply], None]``). ``ErrorRenderer`` holds a protocol's error shape (its
manifest's ``error``), so that no answer looks the shape up by protocol id.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from specs.documents import ErrorShape

from .errors import ApiError
from .jsonio import dumps
from .wire import PLAIN, Wire


@dataclass(slots=True)
class Reply:
    """A JSON answer; faults may edit it before it is serialized."""

    body: Any
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    content_type: str = "application/json"
    """Empty: the answer carries no Content-Type at all (a fault's; a server that forgets to label)."""


class _Unlabelled(web.Response):
    """A response with no Content-Type header: aiohttp labels every non-empty body
    application/octet-stream (RFC 9110 section 8.3 lets a sender omit it), so the label it adds is taken off."""

    async def _prepare_headers(self) -> None:
        await super()._prepare_headers()
        self.headers.pop("Content-Type", None)


def json_response(reply: Reply, wire: Wire = PLAIN) -> web.Response:
    if not reply.content_type:
        return _Unlabelled(body=dumps(reply.body), status=reply.status, headers=reply.headers)
    # The Content-Type header is given whole: aiohttp's content_type= argument parses it per response.
    headers = (
        {"Content-Type": reply.content_type, **reply.headers} if reply.headers else {"Content-Type": reply.content_type}
    )
    if wire is not PLAIN:  # a wire control's way of writing it
        return wire.response(wire.json(reply.body), reply.status, headers)
    return web.Response(body=dumps(reply.body), status=reply.status, headers=headers)


class ErrorRenderer:
    """One protocol's errors: ``ApiError`` -> its body, its ``Reply``, its response."""

    __slots__ = ("shape",)

    def __init__(self, shape: ErrorShape) -> None:
        self.shape = shape

    def body(self, error: ApiError) -> dict[str, Any]:
        return self.shape.render(error.status, error.message, error.details)

    def reply(self, error: ApiError) -> Reply:
        return Reply(self.body(error), error.status, dict(error.headers))

    def response(self, error: ApiError) -> web.Response:
        return json_response(self.reply(error))
