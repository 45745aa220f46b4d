"""The openapi-core adapter for httpx, against the Agent Protocol document over httpx.MockTransport.

The mock answers on 127.0.0.1 while the document's server is http://0.0.0.0:8000, as with the
embedded mock server, so every exchange also goes through the adapter's choice of host_url.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest
from openapi_core.templating.paths.exceptions import PathNotFound, ServerNotFound
from openapi_core.validation.request.exceptions import InvalidParameter, InvalidRequestBody
from openapi_core.validation.response.exceptions import DataValidationError, InvalidData
from werkzeug.datastructures import ImmutableMultiDict

from conformance.contrib.httpx import (
    HttpxOpenAPIRequest,
    HttpxOpenAPIResponse,
    document_host_url,
    validate_exchange,
)
from specs.documents import Spec, load

TASKS = "/ap/v1/agent/tasks"
TASK = {"task_id": "t1", "input": "hi", "artifacts": []}
STEP = {"task_id": "t1", "step_id": "s1", "status": "created", "is_last": False, "artifacts": []}
PAGE = {"total_items": 0, "total_pages": 0, "current_page": 1, "page_size": 10}

Reply = Callable[..., httpx.Client]


@pytest.fixture(scope="module")
def spec() -> Spec:
    return load("agent-protocol")


@pytest.fixture
def reply() -> Iterator[Reply]:
    """``reply(status, **response_kwargs)``: a client every request of which gets that answer."""
    clients: list[httpx.Client] = []

    def make(status: int = 200, **kwargs: Any) -> httpx.Client:
        transport = httpx.MockTransport(lambda request: httpx.Response(status, **kwargs))
        clients.append(httpx.Client(base_url="http://127.0.0.1:8765", transport=transport))
        return clients[-1]

    yield make
    for client in clients:
        client.close()


# --- validate_exchange ---------------------------------------------------------------------------


def test_a_documented_exchange_passes_and_names_its_operation(spec: Spec, reply: Reply) -> None:
    http = reply(json=TASK)
    assert validate_exchange(spec, http.post(TASKS, json={"input": "hi"})) == "createAgentTask"
    assert validate_exchange(spec, http.get(f"{TASKS}/t1")) == "getAgentTask"


def test_a_missing_required_field_fails(spec: Spec, reply: Reply) -> None:
    response = reply(json={"task_id": "t1", "input": "hi"}).get(f"{TASKS}/t1")
    with pytest.raises(InvalidData) as caught:
        validate_exchange(spec, response)
    assert "'artifacts' is a required property" in str(caught.value.__cause__)


def test_a_wrong_content_type_fails(spec: Spec, reply: Reply) -> None:
    response = reply(content=b'{"task_id": "t1", "artifacts": []}', headers={"Content-Type": "text/plain"}).get(
        f"{TASKS}/t1"
    )
    with pytest.raises(DataValidationError, match="mimetype not found: text/plain"):
        validate_exchange(spec, response)


def test_path_parameters_are_resolved_and_pick_the_most_specific_operation(spec: Spec, reply: Reply) -> None:
    http = reply(json=STEP)
    step = http.get(f"{TASKS}/a%20b/steps/s1")
    assert validate_exchange(spec, step) == "getAgentTaskStep"
    result = spec.openapi.unmarshal_request(HttpxOpenAPIRequest(step.request, document_host_url(spec, step.request)))
    assert result.errors == []
    assert result.parameters.path == {"task_id": "a b", "step_id": "s1"}  # decoded, as the copies had it
    listing = reply(json={"steps": [], "pagination": PAGE}).get(f"{TASKS}/t1/steps")
    assert validate_exchange(spec, listing) == "listAgentTaskSteps"


def test_query_parameters_are_read_and_checked(spec: Spec, reply: Reply) -> None:
    http = reply(json={"tasks": [], "pagination": PAGE})
    response = http.get(TASKS, params={"page_size": 2, "current_page": 3})
    assert validate_exchange(spec, response) == "listAgentTasks"
    result = spec.openapi.unmarshal_request(HttpxOpenAPIRequest(response.request, "http://0.0.0.0:8000"))
    assert result.errors == []
    assert result.parameters.query == {"page_size": 2, "current_page": 3}
    with pytest.raises(InvalidParameter, match="query parameter: page_size"):
        validate_exchange(spec, http.get(TASKS, params={"page_size": 0}))  # minimum: 1


def test_the_request_is_checked_unless_told_otherwise(spec: Spec, reply: Reply) -> None:
    response = reply(422, json={}).post(TASKS, json=["not", "an", "object"])
    with pytest.raises(InvalidRequestBody):
        validate_exchange(spec, response)
    assert validate_exchange(spec, response, check_request=False) == "createAgentTask"


def test_a_malformed_answer_passes_only_with_check_response_off(spec: Spec, reply: Reply) -> None:
    response = reply(content=b'{"task_id": 1}\n{"task_id": 2}\n', headers={"Content-Type": "application/json"}).post(
        TASKS, json={"input": "hi"}
    )
    with pytest.raises(DataValidationError):
        validate_exchange(spec, response)
    assert validate_exchange(spec, response, check_response=False) == "createAgentTask"


def test_a_multipart_request_body_is_read_for_validation(spec: Spec, reply: Reply) -> None:
    http = reply(json={"artifact_id": "a1", "agent_created": False, "file_name": "f.bin"})
    uploaded = http.post(f"{TASKS}/t1/artifacts", files={"file": ("f.bin", b"\x00\xff")}, data={"relative_path": "x"})
    assert validate_exchange(spec, uploaded) == "uploadAgentTaskArtifacts"
    with pytest.raises(InvalidRequestBody, match="'file' is a required property"):
        validate_exchange(spec, http.post(f"{TASKS}/t1/artifacts", files={"other": ("f.bin", b"x")}))


def test_an_undocumented_path_fails(spec: Spec, reply: Reply) -> None:
    with pytest.raises(PathNotFound):
        validate_exchange(spec, reply(json={}).get("/ap/v1/agent/nothing"))


# --- host_url ------------------------------------------------------------------------------------


def test_an_absolute_server_is_matched_literally(spec: Spec, reply: Reply) -> None:
    """openapi-core needs the document's server URL as host_url: the mock's own does not match."""
    response = reply(json=TASK).get(f"{TASKS}/t1")
    assert document_host_url(spec, response.request) == "http://0.0.0.0:8000"
    assert document_host_url(load("sgr-agent-core"), httpx.Request("GET", "http://127.0.0.1:1/health")) == (
        "http://localhost:8010"
    )
    with pytest.raises(ServerNotFound):
        validate_exchange(spec, response, host_url="http://127.0.0.1:8765")


def test_a_relative_server_or_none_keeps_the_requests_own_host() -> None:
    synapse, neuro_san = load("synapse-agent"), load("neuro-san")
    # /repo/v1 is the base path: the first server that starts the path decides the host
    assert document_host_url(synapse, httpx.Request("GET", "http://127.0.0.1:1/repo/v1/agent/session/1")) == (
        "https://repo-prod.prod.sagebase.org"
    )
    assert document_host_url(synapse, httpx.Request("GET", "http://127.0.0.1:1/elsewhere")) == "http://127.0.0.1:1"
    assert document_host_url(neuro_san, httpx.Request("GET", "http://127.0.0.1:1/api/v1/list")) == (
        "http://127.0.0.1:1"
    )


# --- the protocol objects ------------------------------------------------------------------------


def test_the_request_object_carries_headers_cookies_and_repeated_query_values() -> None:
    sent = httpx.Request(
        "POST",
        "http://127.0.0.1:1/p?a=1&a=2&b=3",
        json={"k": 1},
        headers={"Cookie": "session=abc; theme=dark", "X-Trace": "t"},
    )
    request = HttpxOpenAPIRequest(sent, "http://0.0.0.0:8000")
    assert (request.host_url, request.path, request.method) == ("http://0.0.0.0:8000", "/p", "post")
    assert (request.content_type, request.body) == ("application/json", b'{"k":1}')
    query = request.parameters.query
    assert isinstance(query, ImmutableMultiDict)  # openapi-core reads repeated values with getlist
    assert (query.getlist("a"), query.getlist("b")) == (["1", "2"], ["3"])
    assert request.parameters.header["x-trace"] == "t"
    assert dict(request.parameters.cookie) == {"session": "abc", "theme": "dark"}
    assert request.parameters.path == {}
    assert HttpxOpenAPIRequest(httpx.Request("GET", "http://h/"), "http://h").body is None


def test_the_response_object_keeps_repeated_headers_and_reads_a_stream() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(
            201, headers=[("Set-Cookie", "a=1"), ("Set-Cookie", "b=2")], content=iter([b"chunk-1 ", b"chunk-2"])
        )

    with (
        httpx.Client(transport=httpx.MockTransport(handler)) as http,
        http.stream("GET", "http://127.0.0.1:1/") as streamed,
    ):
        response = HttpxOpenAPIResponse(streamed)
        assert (response.status_code, response.content_type) == (201, "")
        assert response.headers.getlist("set-cookie") == ["a=1", "b=2"]
        assert response.data == b"chunk-1 chunk-2"


def test_other_objects_are_refused() -> None:
    with pytest.raises(TypeError):
        HttpxOpenAPIRequest("GET /", "http://h")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        HttpxOpenAPIResponse(b"HTTP/1.1 200 OK")  # type: ignore[arg-type]
