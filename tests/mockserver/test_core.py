"""The mock's shared core against real servers: routing and validation errors in each protocol's
shape, body limits, crash containment, the faults mechanism, the embedded server and the CLI."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx
import pytest

from conformance.check.http import tls_context
from mockserver import ApiError, EmbeddedServer, Fault, FaultSet, MockConfig, MockLimits, Reply, catalogue, create_app
from mockserver import app as app_module
from mockserver import descriptor as descriptor_module
from mockserver.__main__ import parser as mock_parser
from mockserver.streaming import StreamGate
from mockserver.validation import OperationValidator
from specs.documents import protocol as protocol_info
from specs.program import __version__
from tests.timing import Clock, scaled

Serve = Callable[..., AbstractContextManager[EmbeddedServer]]
REPO = Path(__file__).resolve().parents[2]
AUTH = {"Authorization": "Bearer alice-token"}
SMALL = MockLimits(max_json_bytes=1000, max_upload_bytes=1000)

# Per protocol: a JSON operation, an unrouted path, a method its path does not allow (and what it
# allows), and a request that must keep answering 200 (to show the server still serves).
PROTOCOLS: dict[str, dict[str, Any]] = {
    "agent-protocol": {
        "json_post": "/ap/v1/agent/tasks",
        "unknown": "/ap/v1/agent/nothing/here",
        "wrong": ("DELETE", "/ap/v1/agent/tasks", {"GET", "POST"}),
        "healthy": ("GET", "/ap/v1/agent/tasks", None),
        "headers": {},
    },
    "neuro-san": {
        "json_post": "/api/v1/hello_world/streaming_chat",
        "unknown": "/api/v1/hello_world/nothing",
        "wrong": ("DELETE", "/api/v1/hello_world/connectivity", {"GET"}),
        "healthy": ("GET", "/api/v1/hello_world/connectivity", None),
        "headers": {},
    },
    "sgr-agent-core": {
        "json_post": "/v1/chat/completions",
        "unknown": "/v1/nothing",
        "wrong": ("PUT", "/health", {"GET"}),
        "healthy": ("GET", "/health", None),
        "headers": {},
    },
    "synapse-agent": {
        "json_post": "/repo/v1/agent/session",
        "unknown": "/repo/v1/nothing/here",
        "wrong": ("DELETE", "/repo/v1/agent/session", {"POST"}),
        "healthy": ("POST", "/repo/v1/agent/sessions/list", {}),
        "headers": AUTH,
    },
}
IDS = sorted(PROTOCOLS)


def error_shape(protocol: str, response: httpx.Response) -> Any:
    """Assert the body is the protocol's documented error shape; return it."""
    assert response.headers["content-type"].startswith("application/json"), response.headers
    body = response.json()
    assert isinstance(body, dict), body
    if protocol == "agent-protocol":
        assert isinstance(body.get("message"), str) and body["message"]
        assert set(body) <= {"message", "errors"}
    elif protocol == "neuro-san":
        assert isinstance(body.get("code"), int) and isinstance(body.get("message"), str)
    elif protocol == "sgr-agent-core":
        assert set(body) == {"detail"}
        assert isinstance(body["detail"], str) or (response.status_code == 422 and isinstance(body["detail"], list))
    else:
        assert body.get("concreteType") == "org.sagebionetworks.repo.model.ErrorResponse"
        assert isinstance(body.get("reason"), str) and body["reason"]
    assert_no_internals(response.text)
    return body


def assert_no_internals(text: str) -> None:
    for leak in ("Traceback", 'File "', ".py", str(REPO), "site-packages", "aiohttp"):
        assert leak not in text, f"{leak!r} leaked in {text[:300]!r}"


@pytest.fixture(params=IDS)
def target(request: pytest.FixtureRequest, serve: Serve) -> Iterator[tuple[str, dict[str, Any], httpx.Client]]:
    protocol = request.param
    with (
        serve(protocols=(protocol,), limits=SMALL) as server,
        httpx.Client(base_url=server.url, timeout=10, verify=tls_context()) as http,
    ):
        yield protocol, PROTOCOLS[protocol], http


def still_serving(case: dict[str, Any], http: httpx.Client) -> None:
    method, path, body = case["healthy"]
    response = http.request(method, path, json=body, headers=case["headers"])
    assert response.status_code == 200, response.text


# --- routing and validation errors ---------------------------------------------------------------


def test_unknown_route(target: tuple[str, dict[str, Any], httpx.Client]) -> None:
    protocol, case, http = target
    response = http.get(case["unknown"], headers=case["headers"])
    assert response.status_code == 404
    error_shape(protocol, response)


def test_wrong_method(target: tuple[str, dict[str, Any], httpx.Client]) -> None:
    protocol, case, http = target
    method, path, allowed = case["wrong"]
    response = http.request(method, path, headers=case["headers"])
    assert response.status_code == 405
    error_shape(protocol, response)
    assert allowed <= set(response.headers["allow"].split(","))
    assert method not in response.headers["allow"]


def test_malformed_json(target: tuple[str, dict[str, Any], httpx.Client]) -> None:
    protocol, case, http = target
    response = http.post(
        case["json_post"], content=b'{"broken": ', headers={**case["headers"], "Content-Type": "application/json"}
    )
    assert response.status_code == protocol_info(protocol).error.invalid_body_status
    assert "JSON" in response.text
    error_shape(protocol, response)


def test_wrong_content_type(target: tuple[str, dict[str, Any], httpx.Client]) -> None:
    protocol, case, http = target
    response = http.post(case["json_post"], content=b"{}", headers={**case["headers"], "Content-Type": "text/plain"})
    assert response.status_code == 415
    assert "application/json" in json.dumps(error_shape(protocol, response))


@pytest.mark.parametrize("chunked", [False, True], ids=["content-length", "chunked"])
def test_oversized_json_body_is_413_and_the_server_keeps_serving(
    target: tuple[str, dict[str, Any], httpx.Client], chunked: bool
) -> None:
    protocol, case, http = target
    body = b'{"pad": "' + b"x" * 2000 + b'"}'
    content: bytes | Iterator[bytes] = iter([body[:700], body[700:1400], body[1400:]]) if chunked else body
    response = http.post(
        case["json_post"], content=content, headers={**case["headers"], "Content-Type": "application/json"}
    )
    assert response.status_code == 413
    assert "1000 bytes" in json.dumps(error_shape(protocol, response))
    still_serving(case, http)
    with httpx.Client(base_url=str(http.base_url), timeout=10) as other:  # and a fresh connection too
        still_serving(case, other)


def test_chunked_json_within_the_limit_is_read_whole(serve: Serve) -> None:
    """A valid body that arrives in several chunks is not cut at the first one."""
    body = json.dumps({"input": "y" * 600}).encode()
    with serve(protocols=("agent-protocol",), limits=SMALL) as server, httpx.Client(base_url=server.url) as http:
        response = http.post(
            "/ap/v1/agent/tasks", content=iter([body[:300], body[300:]]), headers={"Content-Type": "application/json"}
        )
    assert response.status_code == 200, response.text
    assert response.json()["input"] == "y" * 600


def test_oversized_upload_is_413(serve: Serve) -> None:
    with serve(protocols=("agent-protocol",), limits=SMALL) as server, httpx.Client(base_url=server.url) as http:
        task = http.post("/ap/v1/agent/tasks", json={"input": "x"}).json()["task_id"]
        path = f"/ap/v1/agent/tasks/{task}/artifacts"
        too_big = http.post(path, files={"file": ("a.bin", b"y" * 1500)})
        assert too_big.status_code == 413
        assert "Upload exceeds the limit of 1000 bytes" in error_shape("agent-protocol", too_big)["message"]
        assert http.post(path, files={"file": ("a.bin", b"y" * 500)}).status_code == 200


def test_synapse_missing_or_bad_token_is_401(serve: Serve) -> None:
    with serve(protocols=("synapse-agent",)) as server, httpx.Client(base_url=server.url) as http:
        for headers in (
            {},
            {"Authorization": "Bearer wrong"},
            {"Authorization": "Basic alice-token"},
            {"Authorization": "Bearer"},
            {"Authorization": "bearer alice-token-and-more"},
        ):
            response = http.post("/repo/v1/agent/sessions/list", json={}, headers=headers)
            assert response.status_code == 401, headers
            assert response.headers["www-authenticate"].startswith("Bearer")
            error_shape("synapse-agent", response)
        assert http.post("/repo/v1/agent/sessions/list", json={}, headers=AUTH).status_code == 200


def test_unrouted_path_outside_every_protocol_is_plain_404(serve: Serve) -> None:
    with serve(protocols=("agent-protocol",)) as server, httpx.Client(base_url=server.url) as http:
        response = http.get("/definitely/not/a/protocol")
    assert response.status_code == 404
    assert_no_internals(response.text)


def test_crash_is_a_500_in_protocol_shape_without_internals(serve: Serve, monkeypatch: pytest.MonkeyPatch) -> None:
    def explode(self: OperationValidator, request: Any) -> Any:
        raise RuntimeError(f"secret state at {REPO}/mockserver/validation.py line 1")

    with serve(protocols=("sgr-agent-core",)) as server, httpx.Client(base_url=server.url) as http:
        monkeypatch.setattr(OperationValidator, "parameters", explode)
        response = http.get("/health")
        assert response.status_code == 500
        body = error_shape("sgr-agent-core", response)
        assert body == {"detail": "Internal server error"}
        assert "secret" not in response.text
        monkeypatch.undo()
        assert http.get("/health").status_code == 200  # and it keeps serving


# --- faults ----------------------------------------------------------------------------------------


def _fault(**how: Any) -> Fault:
    return Fault(
        name=how.pop("name", "test-fault"),
        protocol=how.pop("protocol", "agent-protocol"),
        breaks=("AP-TASK-001",),
        description="for a test",
        **how,
    )


def test_faultset_lookups() -> None:
    edits: list[str] = []
    first = _fault(name="a", operation="createAgentTask", mutate=lambda r: edits.append("a"))
    second = _fault(name="b", operation="createAgentTask", mutate=lambda r: edits.append("b"))
    lax = _fault(name="c", operation="listAgentTasks", skip_validation=True)
    open_door = _fault(name="d", protocol="synapse-agent", disables_auth=True)
    faults = FaultSet([first, second, lax, open_door])
    assert "a" in faults and "z" not in faults and bool(faults) and len(list(faults)) == 4
    assert faults.skips_validation("listAgentTasks") and not faults.skips_validation("createAgentTask")
    assert faults.disables_auth
    mutate = faults.mutation("createAgentTask")
    assert mutate is not None and faults.mutation("listAgentTasks") is None
    mutate(Reply({}))
    assert edits == ["a", "b"]  # every edit, in order
    empty = FaultSet()
    assert not empty and not empty.disables_auth and empty.mutation("createAgentTask") is None


def test_unknown_fault_is_a_clear_key_error() -> None:
    with pytest.raises(KeyError) as caught:
        descriptor_module.resolve(["no-such-fault", "nor-this"])
    assert caught.value.args[0] == (
        "unknown fault(s): no-such-fault, nor-this; see `python -m mockserver --list-faults`"
    )
    with pytest.raises(KeyError, match="no-such-fault"):
        create_app(MockConfig(faults=("no-such-fault",)))


def test_catalogue_refuses_duplicate_names(monkeypatch: pytest.MonkeyPatch) -> None:
    real = descriptor_module.discover("agent-protocol")
    twice = replace(real, faults=(_fault(name="twice"), _fault(name="twice")))
    monkeypatch.setattr(descriptor_module, "descriptors", lambda ids=None: {"agent-protocol": twice})
    with pytest.raises(ValueError, match="duplicate fault name 'twice'"):
        catalogue()


def test_catalogue_entries_are_well_formed() -> None:
    for name, fault in catalogue().items():
        assert fault.name == name and name
        assert fault.protocol in PROTOCOLS, name
        assert bool(fault.breaks) != fault.control, name  # a passing control breaks nothing
        assert all(b.split("-", 1)[0] in {"AP", "NS", "SGR", "SYN"} for b in fault.breaks), name
        assert fault.description, name


def _serve_with(monkeypatch: pytest.MonkeyPatch, serve: Serve, protocol: str, *faults: Fault) -> Any:
    monkeypatch.setattr(app_module, "resolve", lambda names: FaultSet(faults))
    return serve(protocols=(protocol,), faults=tuple(f.name for f in faults))


def test_mutation_fault_edits_answers_and_errors(serve: Serve, monkeypatch: pytest.MonkeyPatch) -> None:
    def edit(reply: Any) -> None:
        reply.headers["X-Fault"] = "on"
        if reply.status == 200:
            reply.body["task_id"] = 42

    fault = _fault(operation="createAgentTask", mutate=edit)
    with _serve_with(monkeypatch, serve, "agent-protocol", fault) as server, httpx.Client(base_url=server.url) as http:
        ok = http.post("/ap/v1/agent/tasks", json={"input": "x"})
        assert ok.status_code == 200 and ok.json()["task_id"] == 42 and ok.headers["x-fault"] == "on"
        bad = http.post("/ap/v1/agent/tasks", json={"input": 5})
        assert bad.status_code == 422 and bad.headers["x-fault"] == "on"
        other = http.get("/ap/v1/agent/tasks")
        assert other.status_code == 200 and "x-fault" not in other.headers  # only its operation


def test_skip_validation_fault(serve: Serve, monkeypatch: pytest.MonkeyPatch) -> None:
    fault = _fault(operation="createAgentTask", skip_validation=True)
    body = {"input": "x", "additional_input": "not an object"}
    with serve(protocols=("agent-protocol",)) as server, httpx.Client(base_url=server.url) as http:
        assert http.post("/ap/v1/agent/tasks", json=body).status_code == 422
    with _serve_with(monkeypatch, serve, "agent-protocol", fault) as server, httpx.Client(base_url=server.url) as http:
        response = http.post("/ap/v1/agent/tasks", json=body)
        assert response.status_code != 422
        assert response.status_code < 500, response.text


def test_disabled_auth_fault(serve: Serve, monkeypatch: pytest.MonkeyPatch) -> None:
    fault = _fault(protocol="synapse-agent", disables_auth=True)
    with _serve_with(monkeypatch, serve, "synapse-agent", fault) as server, httpx.Client(base_url=server.url) as http:
        assert http.post("/repo/v1/agent/sessions/list", json={}).status_code == 200


# --- limits ----------------------------------------------------------------------------------------


def test_stream_gate_bounds_open_streams() -> None:
    gate = StreamGate(2)
    with gate, gate:
        assert gate.open == 2
        with pytest.raises(ApiError) as caught, gate:
            pass
        assert caught.value.status == 503
        assert caught.value.headers == {"Retry-After": "1"}
        assert "limit 2" in caught.value.message
    assert gate.open == 0
    with gate:  # released streams make room again
        assert gate.open == 1


def test_default_limits_are_documented_values() -> None:
    limits = MockLimits()
    assert (limits.max_json_bytes, limits.max_upload_bytes) == (1 << 20, 10 << 20)
    assert limits.max_open_streams > 0 and limits.max_stored_objects > 0 and limits.max_stored_bytes > 0


# --- the embedded server ---------------------------------------------------------------------------


def test_embedded_server_lifecycle() -> None:
    server = EmbeddedServer(MockConfig(protocols=("sgr-agent-core",)))
    with server:
        assert server.url == f"http://127.0.0.1:{server.port}" and server.port > 0
        assert httpx.get(server.url + "/health", timeout=5).status_code == 200
    assert server._thread is not None and not server._thread.is_alive()
    with pytest.raises(httpx.ConnectError):
        httpx.get(server.url + "/health", timeout=2)


def test_embedded_server_reports_a_taken_port() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(RuntimeError, match="failed to start"):
            EmbeddedServer(MockConfig(protocols=("sgr-agent-core",)), port=port).start()


# --- python -m mockserver --------------------------------------------------------------------------


def _mock_cli(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mockserver", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )


def test_cli_version_names_the_program_as_invoked() -> None:
    proc = _mock_cli("--version")
    assert (proc.returncode, proc.stdout) == (0, f"python -m mockserver {__version__}\n"), proc.stderr
    # the console script (tests/test_packaging.py runs the installed one) names itself
    assert mock_parser("agent-mock").format_usage().startswith("usage: agent-mock ")


def test_cli_lists_faults() -> None:
    proc = _mock_cli("--list-faults")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    names = sorted(catalogue())
    assert len(lines) == len(names)
    assert [line.split()[0] for line in lines] == names
    controls = {f.name for f in catalogue().values() if f.control}
    assert all(" breaks " in line for line in lines if line.split()[0] not in controls)
    assert all(" control: must pass" in line for line in lines if line.split()[0] in controls)


def test_cli_unknown_fault_exits_2_before_serving() -> None:
    proc = _mock_cli("--port", "0", "--fault", "no-such-fault", timeout=30)
    assert proc.returncode == 2
    assert "error: unknown fault(s): no-such-fault" in proc.stderr
    assert "listening" not in proc.stdout
    assert "Traceback" not in proc.stderr


def test_cli_taken_port_exits_2() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        proc = _mock_cli("--port", str(taken.getsockname()[1]), "--protocol", "sgr-agent-core", timeout=30)
    assert proc.returncode == 2
    assert "error: cannot listen on 127.0.0.1:" in proc.stderr
    assert "Traceback" not in proc.stderr


@pytest.mark.parametrize("loop", ["asyncio", "uvloop"])
def test_cli_serves_on_port_0_and_stops_on_sigterm(loop: str) -> None:
    if loop == "uvloop":
        pytest.importorskip("uvloop")
    proc = subprocess.Popen(
        [sys.executable, "-m", "mockserver", "--port", "0", "--protocol", "sgr-agent-core", "--loop", loop],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    watchdog = threading.Timer(30, proc.kill)  # bounds the blocking readline below
    watchdog.start()
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()  # printed once it listens
        assert line.startswith("mockserver listening on http://127.0.0.1:"), line
        url = line.split()[3]
        assert f"(sgr-agent-core; {loop} loop)" in line
        assert httpx.get(url + "/health", timeout=5).status_code == 200
        proc.send_signal(signal.SIGTERM)
        clock = Clock()
        assert proc.wait(timeout=scaled(15)) == 0
        clock.assert_within(15, "stopping")
    finally:
        watchdog.cancel()
        if proc.poll() is None:
            proc.kill()
        proc.wait(5)
        for pipe in (proc.stdout, proc.stderr):
            if pipe is not None:
                pipe.close()
