"""Binds a protocol's handlers to its document's operations, by operationId.

A protocol's handlers are a ``Handlers`` class: its state in attributes made in ``__init__``, one
method per operation marked ``@operation("createAgentTask")`` (and ``@route(method, path)`` for a
path the document does not describe). ``ProtocolApi.mount`` makes one and registers each method
at its operation's method and path; the wrapper authenticates (where the document asks for it),
validates the request with the validators compiled at start-up, applies the run's faults, and
renders any ``ApiError`` with the protocol's error renderer, bound once. Handlers only ever see
valid input. ``Hooks.wrap`` puts the Host check, chaos, the journal and the access log around it,
at the cost of a set lookup and one attribute test while they are off.

A protocol's store is made through ``ProtocolApi.stateful``, so that the admin API can reset it.
"""

from __future__ import annotations

import asyncio
import hmac
import json
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any, ClassVar, TypeVar

from aiohttp import web

from specs.documents import Spec, resolve_ref
from specs.schemas import SchemaSet

from .config import MockConfig
from .errors import ApiError
from .faults import FaultSet
from .hooks import Hooks
from .hostile import Surrogates, holds_surrogate
from .matching import MISSING, Seen, Slot
from .reply import ErrorRenderer, Reply, json_response
from .streaming import StreamGate
from .validation import OperationValidator
from .wire import PLAIN, WIRE, Wire

log = logging.getLogger("mockserver")
S = TypeVar("S")
H = TypeVar("H", bound="Handlers")
M = TypeVar("M", bound=Callable[..., Any])
OPERATION = "_mock_operation"
"""Attribute ``@operation`` sets on a handler method: the operationId it serves."""
ROUTE = "_mock_route"
"""Attribute ``@route`` sets: the (method, path) of a route the document does not describe."""


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
Endpoint = Callable[[web.Request], Awaitable[web.StreamResponse]]


def operation(operation_id: str) -> Callable[[M], M]:
    """Marks a ``Handlers`` method as the handler of the document's ``operation_id``."""

    def mark(method: M) -> M:
        setattr(method, OPERATION, operation_id)
        return method

    return mark


def route(method: str, path: str) -> Callable[[M], M]:
    """Marks a ``Handlers`` method (taking the ``web.Request``) as a route the document does not
    describe (a profile's overlay): hooked like every operation, not validated, no faults."""

    def mark(handler: M) -> M:
        setattr(handler, ROUTE, (method, path))
        return handler

    return mark


class Handlers:
    """Base of a protocol's handlers: state as attributes, one marked method per operation."""

    protocol: ClassVar[str] = ""
    """The protocol id these handlers serve (checked when mounted)."""
    data: Any = None
    """The protocol's data stubs (its descriptor's ``stubs`` reads them; stubs.py sets them)."""

    def __init__(self, api: ProtocolApi) -> None:
        self.api = api

    @classmethod
    def operations(cls) -> dict[str, str]:
        """operationId -> method name, for every method marked ``@operation``."""
        found: dict[str, str] = {}
        for name in dir(cls):
            operation_id = getattr(getattr(cls, name), OPERATION, None)
            if operation_id is not None:
                if operation_id in found:
                    raise TypeError(f"{cls.__name__}: {found[operation_id]} and {name} both serve {operation_id}")
                found[operation_id] = name
        return found

    @classmethod
    def routes(cls) -> dict[tuple[str, str], str]:
        """(method, path) -> method name, for every method marked ``@route``."""
        return {getattr(getattr(cls, n), ROUTE): n for n in dir(cls) if hasattr(getattr(cls, n), ROUTE)}


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
        self.errors = ErrorRenderer(spec.info.error)
        """The protocol's error shape, bound once: ``self.errors.response(ApiError(404))``."""
        self.routes: list[web.RouteDef] = []
        self.stub_slots: dict[str, Slot] = {}
        """Per operation, the stubs that may answer it (stubs.py fills each slot in place)."""
        self.early_stub_slots: dict[str, Slot] = {}
        """Per operation, the stubs matched before authentication and validation (a recording's)."""
        self.handlers: Handlers | None = None
        self.schemas = SchemaSet(spec.raw)
        self._secured_by_default = bool(spec.raw.get("security"))
        self._tokens = [(user, token.encode()) for user, token in config.tokens.items()]
        self._challenge = f'Bearer realm="{spec.info.realm}"' if spec.info.realm else "Bearer"

    def mount(self, handlers: type[H]) -> H:
        """Makes the protocol's handlers and registers each of their operations and routes."""
        if handlers.protocol and handlers.protocol != self.protocol_id:
            raise TypeError(f"{handlers.__name__} serves {handlers.protocol}, not {self.protocol_id}")
        known = {op.operation_id for op in self.spec.operations()}
        marked = handlers.operations()
        unknown = sorted(set(marked) - known)
        if unknown:
            raise KeyError(
                f"{self.protocol_id}: {handlers.__name__} serves {', '.join(unknown)}, which the document does not have"
            )
        instance = self.handlers = handlers(self)
        for operation_id, name in marked.items():
            self.operation(operation_id)(getattr(instance, name))
        for (method, path), name in handlers.routes().items():
            self.route(method, path, getattr(instance, name))
        return instance

    def forward(self, endpoint_for: Callable[[str | None], Endpoint], handlers: type[Handlers]) -> None:
        """Every operation of the document, and every route of ``handlers``, served by the endpoint
        ``endpoint_for(operation_id)`` gives (record.py: each forwarded to a real server), behind the hooks."""
        for op in self.spec.operations():
            endpoint = endpoint_for(op.operation_id)
            if self.hooks is not None:
                endpoint = self.hooks.wrap(self.protocol_id, op.operation_id, endpoint, self.errors.response)
            self.routes.append(web.route(op.method.upper(), self.base_path + op.path, endpoint))
        for method, path in handlers.routes():
            self.route(method, path, endpoint_for(None))

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

    def route(self, method: str, path: str, endpoint: Endpoint) -> None:
        """A route the document does not describe (a profile's overlay), behind the hooks like every
        operation: journalled, logged and readable by browsers; not validated, no faults applied."""
        if self.hooks is not None:
            endpoint = self.hooks.wrap(self.protocol_id, None, endpoint, self.errors.response)
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

    def identify(self, request: web.Request) -> str | None:
        """The configured user whose token the request carries, if any (for the journal)."""
        scheme, _, token = request.headers.get("Authorization", "").partition(" ")
        if scheme.lower() != "bearer" or not token:
            return None
        presented = token.strip().encode("utf-8", "surrogateescape")
        # aiohttp decodes header bytes that are not UTF-8 as lone surrogates: kept as bytes above
        found = None
        for user, expected in self._tokens:  # compare with every token: timing reveals nothing
            if hmac.compare_digest(presented, expected):
                found = user
        return found

    def authenticate(self, request: web.Request) -> str:
        if self.faults.disables_auth:
            return next(iter(self.config.tokens), "anonymous")
        found = self.identify(request)
        if found is not None:
            return found
        raise ApiError(
            401,
            "The provided bearer token is missing or invalid",
            headers={"WWW-Authenticate": self._challenge},
        )

    def _wrap(self, operation_id: str, handler: Handler, validator: OperationValidator, secured: bool) -> Endpoint:
        errors = self.errors
        error_response: Callable[[ApiError], web.Response] = errors.response
        faults = self.faults
        wire = faults.wire(self.protocol_id)
        if wire == PLAIN:
            wire = PLAIN
        else:  # a wire control: every answer of the protocol written its way, errors and streams too
            error_response = partial(_wire_error, errors, wire)
        skip_body = faults.skips_validation(operation_id)
        hostile = faults.hostile(operation_id)
        strict_utf8 = faults.keeps_surrogates(self.protocol_id)  # a stored lone surrogate fails its answers
        mutate = faults.mutation(operation_id)
        reads_body = skip_body or bool(validator.media)  # an operation without a body awaits nothing for it
        stubs = self.stub_slots.setdefault(operation_id, Slot())
        early = self.early_stub_slots.setdefault(operation_id, Slot())
        protocol_id = self.protocol_id

        async def endpoint(request: web.Request) -> web.StreamResponse:
            preread = None
            if wire is not PLAIN:
                request[WIRE] = wire
            if early.stubs:  # stubs that answer the request as it came (a recording's): one test when there are none
                found = await _early_stub(request, early, protocol_id, operation_id, faults)
                if isinstance(found, web.StreamResponse):
                    return found
                preread = found
            try:
                user = self.authenticate(request) if secured else None
                path, query = validator.parameters(request)
                body = None
                if reads_body:
                    reading = _raw_json(request, preread) if skip_body else validator.body(request, preread, hostile)
                    body = await reading
                if hostile.echoed and hostile.surrogates is Surrogates.KEPT and holds_surrogate(body):
                    raise ApiError(500, "'utf-8' codec can't encode a surrogate: not allowed")  # the fault
                call = Call(request, operation_id, path, query, body, user, faults)
                if stubs.stubs:  # only an operation a stub names pays more than this test
                    seen = Seen(protocol_id, operation_id, path, request.query, request.headers, body, user)
                    for stub in stubs.candidates(seen):
                        answering = stub.answer(seen, call)
                        if answering is not None:
                            stubbed: web.StreamResponse = await answering
                            return stubbed
                result = await handler(call)
            except web.HTTPRequestEntityTooLarge:  # aiohttp's own cap on the whole body
                return error_response(ApiError(413, "Request body too large"))
            except (ConnectionResetError, asyncio.CancelledError):
                raise
            except ApiError as error:
                if mutate is not None:
                    reply = errors.reply(error)
                    mutate(reply)
                    return json_response(reply, wire)
                return error_response(error)
            except Exception:  # a bug must still answer in the protocol's shape, without internals
                log.exception("unhandled error in %s", operation_id)
                return error_response(ApiError(500, "Internal server error"))
            if isinstance(result, Reply):
                if mutate is not None:
                    mutate(result)
                if strict_utf8 and holds_surrogate(result.body):
                    return error_response(ApiError(500, "'utf-8' codec can't encode a surrogate: not allowed"))
                return json_response(result, wire)
            return result

        if self.hooks is None:
            return endpoint
        return self.hooks.wrap(self.protocol_id, operation_id, endpoint, error_response, self.identify)


def _wire_error(errors: ErrorRenderer, wire: Wire, error: ApiError) -> web.Response:
    return json_response(errors.reply(error), wire)


def _with_parameters_resolved(document: Mapping[str, Any], node: Mapping[str, Any]) -> Mapping[str, Any]:
    """``node`` with each ``$ref: '#/components/parameters/X'`` in its parameters replaced by X."""
    params = node.get("parameters")
    if not params or not any("$ref" in p for p in params):
        return node
    return {**node, "parameters": [resolve_ref(document, p) for p in params]}


async def _raw_json(request: web.Request, preread: bytes | None = None) -> Any:
    """Body without validation (the accept-invalid-input faults); never fails."""
    try:
        if preread is not None:
            return json.loads(preread) if preread else None
        return json.loads(await request.read()) if request.body_exists else None
    except (ValueError, RecursionError):
        return None


async def _early_stub(
    request: web.Request, early: Slot, protocol_id: str, operation_id: str, faults: FaultSet
) -> web.StreamResponse | bytes | None:
    """The answer of the first stub matched before validation that takes the request; else the body
    bytes it read to match (None if none read them), which validation then takes instead."""
    preread = None
    body = MISSING
    if request.body_exists and early.reads_body:
        preread = await request.read()  # bounded by the application's client_max_size
        try:  # read as the recorder read it (lenient: a recording holds what the server was sent)
            body = json.loads(preread) if preread else None
        except (ValueError, RecursionError):
            body = MISSING  # not JSON: no body predicate holds
    elif not request.body_exists:
        body = None
    call = Call(request, operation_id, dict(request.match_info), {}, None if body is MISSING else body, None, faults)
    seen = Seen(protocol_id, operation_id, call.path, request.query, request.headers, body, None)
    for stub in early.candidates(seen):
        answering = stub.answer(seen, call)
        if answering is not None:
            answer: web.StreamResponse = await answering
            return answer
    return preread
