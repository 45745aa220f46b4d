"""Binds a protocol's handlers to its document's operations, by operationId.

``ProtocolApi.operation("createAgentTask")`` registers a handler at the operation's method and
path; the wrapper authenticates (where the document asks for it), validates the request with
the validators compiled at start-up, applies the run's faults, and renders any ``ApiError`` in
the protocol's error shape. Handlers only ever see valid input. ``Hooks.wrap`` puts chaos, the
journal and the access log around it, at the cost of one attribute test while they are off.

A protocol's store is made through ``ProtocolApi.stateful``, so that the admin API can reset it.
"""

from __future__ import annotations

import asyncio
import hmac
import json
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from aiohttp import web

from specs.documents import Spec, resolve_ref
from specs.schemas import SchemaSet

from .config import MockConfig
from .errors import ApiError, error_body
from .faults import FaultSet
from .hooks import Hooks
from .jsonio import dumps
from .streaming import StreamGate
from .validation import OperationValidator

log = logging.getLogger("mockserver")
S = TypeVar("S")


@dataclass(slots=True)
class Reply:
    """A JSON answer; faults may edit it before it is serialized."""

    body: Any
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    content_type: str = "application/json"


@dataclass(slots=True)
class Call:
    request: web.Request
    operation_id: str
    path: dict[str, str]
    query: dict[str, Any]
    body: Any
    user: str | None
    faults: FaultSet

    def fault(self, name: str) -> bool:
        return name in self.faults


Handler = Callable[[Call], Awaitable["Reply | web.StreamResponse"]]


def json_response(protocol_id: str, reply: Reply) -> web.Response:
    # The Content-Type header is given whole: aiohttp's content_type= argument parses it per response.
    headers = (
        {"Content-Type": reply.content_type, **reply.headers} if reply.headers else {"Content-Type": reply.content_type}
    )
    return web.Response(body=dumps(reply.body), status=reply.status, headers=headers)


def error_response(protocol_id: str, error: ApiError) -> web.Response:
    return json_response(protocol_id, Reply(error_body(protocol_id, error), error.status, dict(error.headers)))


class ProtocolApi:
    def __init__(
        self, spec: Spec, config: MockConfig, faults: FaultSet, gate: StreamGate, hooks: Hooks | None = None
    ) -> None:
        self.spec = spec
        self.protocol_id = spec.info.id
        self.config = config
        self.faults = faults
        self.gate = gate
        self.hooks = hooks
        self.stores: list[tuple[Any, Callable[[], Any]]] = []
        """Each store the protocol keeps, with the factory that makes it empty (``reset``)."""
        self.base_path = spec.info.base_path
        self.routes: list[web.RouteDef] = []
        self.schemas = SchemaSet(spec.raw)
        self._secured_by_default = bool(spec.raw.get("security"))
        self._tokens = [(user, token.encode()) for user, token in config.tokens.items()]
        self._challenge = f'Bearer realm="{spec.info.realm}"' if spec.info.realm else "Bearer"

    def operation(self, operation_id: str) -> Callable[[Handler], Handler]:
        op = self.spec.operation(operation_id)
        path_item = _with_parameters_resolved(self.spec.raw, self.spec.raw["paths"][op.path])
        definition = _with_parameters_resolved(self.spec.raw, op.definition)
        validator = OperationValidator(
            self.protocol_id,
            definition,
            path_item,
            self.schemas,
            self.config.limits.max_json_bytes,
            self.config.limits.max_upload_bytes,
            self.config.limits.max_json_depth,
        )
        security = op.definition.get("security")
        secured = bool(security) if security is not None else self._secured_by_default

        def register(handler: Handler) -> Handler:
            self.routes.append(
                web.route(
                    op.method.upper(), self.base_path + op.path, self._wrap(operation_id, handler, validator, secured)
                )
            )
            return handler

        return register

    def route(self, method: str, path: str, endpoint: Callable[[web.Request], Awaitable[web.StreamResponse]]) -> None:
        """A route the document does not describe (a profile's overlay), behind the hooks like every
        operation: journalled, logged and readable by browsers; not validated, no faults applied."""
        if self.hooks is not None:
            endpoint = self.hooks.wrap(self.protocol_id, None, endpoint, error_response)
        self.routes.append(web.route(method, path, endpoint))

    def stateful(self, factory: Callable[[], S]) -> S:
        """A store made by ``factory``; ``reset`` empties it in place, so handlers keep their reference."""
        store = factory()
        self.stores.append((store, factory))
        return store

    def reset(self) -> None:
        for store, factory in self.stores:
            fresh = vars(factory())
            vars(store).clear()
            vars(store).update(fresh)

    def store(self, kind: type[S]) -> S:
        """The protocol's store of that class (fixtures.py loads into it)."""
        for store, _ in self.stores:
            if isinstance(store, kind):
                return store
        raise LookupError(f"{self.protocol_id} keeps no {kind.__name__}")

    def authenticate(self, request: web.Request) -> str:
        if self.faults.disables_auth:
            return next(iter(self.config.tokens), "anonymous")
        header = request.headers.get("Authorization", "")
        scheme, _, token = header.partition(" ")
        if scheme.lower() == "bearer" and token:
            # aiohttp decodes header bytes that are not UTF-8 as lone surrogates: keep them as bytes
            presented = token.strip().encode("utf-8", "surrogateescape")
            found = None
            for user, expected in self._tokens:  # compare with every token: timing reveals nothing
                if hmac.compare_digest(presented, expected):
                    found = user
            if found is not None:
                return found
        raise ApiError(
            401,
            "The provided bearer token is missing or invalid",
            headers={"WWW-Authenticate": self._challenge},
        )

    def _wrap(
        self, operation_id: str, handler: Handler, validator: OperationValidator, secured: bool
    ) -> Callable[[web.Request], Awaitable[web.StreamResponse]]:
        protocol_id = self.protocol_id
        faults = self.faults
        skip_body = faults.skips_validation(operation_id)
        mutate = faults.mutation(operation_id)
        reads_body = skip_body or bool(validator.media)  # an operation without a body awaits nothing for it

        async def endpoint(request: web.Request) -> web.StreamResponse:
            try:
                user = self.authenticate(request) if secured else None
                path, query = validator.parameters(request)
                body = None
                if reads_body:
                    body = await (_raw_json(request) if skip_body else validator.body(request))
                result = await handler(Call(request, operation_id, path, query, body, user, faults))
            except web.HTTPRequestEntityTooLarge:  # aiohttp's own cap on the whole body
                return error_response(protocol_id, ApiError(413, "Request body too large"))
            except (ConnectionResetError, asyncio.CancelledError):
                raise
            except ApiError as error:
                if mutate is not None:
                    reply = Reply(error_body(protocol_id, error), error.status, dict(error.headers))
                    mutate(reply)
                    return json_response(protocol_id, reply)
                return error_response(protocol_id, error)
            except Exception:  # a bug must still answer in the protocol's shape, without internals
                log.exception("unhandled error in %s", operation_id)
                return error_response(protocol_id, ApiError(500, "Internal server error"))
            if isinstance(result, Reply):
                if mutate is not None:
                    mutate(result)
                return json_response(protocol_id, result)
            return result

        if self.hooks is None:
            return endpoint
        return self.hooks.wrap(protocol_id, operation_id, endpoint, error_response)


def _with_parameters_resolved(document: Mapping[str, Any], node: Mapping[str, Any]) -> Mapping[str, Any]:
    """``node`` with each ``$ref: '#/components/parameters/X'`` in its parameters replaced by X."""
    params = node.get("parameters")
    if not params or not any("$ref" in p for p in params):
        return node
    return {**node, "parameters": [resolve_ref(document, p) for p in params]}


async def _raw_json(request: web.Request) -> Any:
    """Body without validation (the accept-invalid-input faults); never fails."""
    try:
        return json.loads(await request.read()) if request.body_exists else None
    except (ValueError, RecursionError):
        return None
