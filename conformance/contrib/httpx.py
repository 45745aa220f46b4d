"""openapi-core adapter for httpx, in the manner of ``openapi_core.contrib.requests``.

``HttpxOpenAPIRequest`` and ``HttpxOpenAPIResponse`` satisfy openapi-core's ``Request`` and
``Response`` protocols; ``validate_exchange`` checks one httpx exchange (the response and the
request it answers) against a protocol document and names the operation it matched.
"""

from __future__ import annotations

from urllib.parse import urljoin, urlsplit

import httpx
from openapi_core.datatypes import RequestParameters
from openapi_core.templating.paths import APICallPathFinder
from werkzeug.datastructures import Headers, ImmutableMultiDict

from specs.documents import Spec

__all__ = ["HttpxOpenAPIRequest", "HttpxOpenAPIResponse", "document_host_url", "validate_exchange"]


class HttpxOpenAPIRequest:
    """An ``httpx.Request`` as openapi-core's ``Request``.

    ``host_url`` (scheme and host, e.g. ``http://localhost:8010``) is given rather than read from
    the request: openapi-core matches an absolute server URL of the document literally, so a
    request sent to a mock on another host and port must be presented under the document's
    server (see ``document_host_url``). ``path`` is the request's own path, base path included.
    """

    def __init__(self, request: httpx.Request, host_url: str) -> None:
        if not isinstance(request, httpx.Request):
            raise TypeError(f"'request' argument is not of type {httpx.Request}")
        self.request = request
        self.host_url = host_url
        self.parameters = RequestParameters(
            query=ImmutableMultiDict(request.url.params.multi_items()),
            header=Headers(request.headers.multi_items()),
            cookie=ImmutableMultiDict(_cookies(request.headers.get_list("cookie"))),
        )

    @property
    def path(self) -> str:
        """Percent-decoded, as werkzeug's adapter has it, so path parameters arrive decoded; an
        encoded ``/`` inside one therefore splits it and the path is not found."""
        return self.request.url.path

    @property
    def method(self) -> str:
        return self.request.method.lower()

    @property
    def body(self) -> bytes | None:
        return self.request.read() or None  # read() also buffers a not-yet-read (multipart) stream

    @property
    def content_type(self) -> str:
        return str(self.request.headers.get("content-type", ""))


class HttpxOpenAPIResponse:
    """An ``httpx.Response`` as openapi-core's ``Response``; a streamed body is read in full."""

    def __init__(self, response: httpx.Response) -> None:
        if not isinstance(response, httpx.Response):
            raise TypeError(f"'response' argument is not of type {httpx.Response}")
        self.response = response

    @property
    def status_code(self) -> int:
        return self.response.status_code

    @property
    def content_type(self) -> str:
        return str(self.response.headers.get("content-type", ""))

    @property
    def headers(self) -> Headers:
        return Headers(self.response.headers.multi_items())

    @property
    def data(self) -> bytes:
        return self.response.read()


def document_host_url(spec: Spec, request: httpx.Request) -> str:
    """The ``host_url`` under which openapi-core finds ``request`` in ``spec``'s document.

    The request's path is kept whole; the first top-level server whose path (the base path,
    e.g. ``/repo/v1``) starts it decides the host: an absolute server lends its own scheme and
    host (openapi-core compares those literally: a mock on 127.0.0.1 answering for a document
    whose server is ``http://localhost:8010`` must be validated as ``http://localhost:8010``), a
    relative one, or none, leaves the request's own.
    """
    url = request.url
    own = f"{url.scheme}://{url.netloc.decode('ascii')}"
    for server in spec.raw.get("servers") or ():
        address = str(server.get("url", "/"))
        for name, variable in (server.get("variables") or {}).items():
            address = address.replace(f"{{{name}}}", str(variable.get("default", "")))
        parts = urlsplit(address)
        base = parts.path.rstrip("/")
        if url.path == base or url.path.startswith(f"{base}/"):
            return f"{parts.scheme}://{parts.netloc}" if parts.scheme else own
    return own


def validate_exchange(
    spec: Spec,
    response: httpx.Response,
    host_url: str | None = None,
    *,
    check_request: bool = True,
    check_response: bool = True,
) -> str:
    """Validate one exchange against ``spec``'s document: the request ``response`` answers
    (parameters, security, body) and the response (status, headers, body). Returns the
    operationId openapi-core matched.

    Raises openapi-core's errors (``OpenAPIError`` subclasses such as ``PathNotFound``,
    ``InvalidRequestBody``, ``InvalidData``, ``MissingRequiredHeader``). ``host_url`` defaults
    to ``document_host_url``. Turn ``check_request`` off for a request sent malformed on
    purpose to provoke an error answer, ``check_response`` off for a body the caller checks
    another way (e.g. a stream, frame by frame); the operation must be found either way.
    """
    request = HttpxOpenAPIRequest(response.request, host_url or document_host_url(spec, response.request))
    if check_request:
        spec.openapi.validate_request(request)
    if check_response:
        spec.openapi.validate_response(request, HttpxOpenAPIResponse(response))
    found = APICallPathFinder(spec.openapi.spec, base_url=spec.openapi.config.server_base_url).find(
        request.method, urljoin(request.host_url, request.path)
    )
    pattern = found.path_result.pattern
    for op in spec.operations():
        if op.method == request.method and op.path == pattern:
            return op.operation_id
    raise LookupError(f"{spec.info.id}: openapi-core matched {request.method.upper()} {pattern}, not in the document")


def _cookies(lines: list[str]) -> list[tuple[str, str]]:
    """The ``name=value`` pairs of ``Cookie`` request headers (RFC 6265 section 4.2)."""
    pairs = (part.strip().partition("=") for line in lines for part in line.split(";"))
    return [(name, value) for name, sep, value in pairs if sep and name]
