"""Forwarding: bytes unchanged, bounds, upstream failures in the protocol's error shape, reports."""

from __future__ import annotations

import json
import socket
import threading
from pathlib import Path

import httpx

from conformance.proxy.forward import VIOLATIONS_HEADER, ProxyConfig, ProxyServer
from conformance.verdicts.results import Status

from .conftest import ProxyFactory

REPORT_FILES = ["badge.svg", "document.html", "junit.xml", "report.html", "results.json", "summary.md"]


def test_answers_reach_the_client_byte_for_byte(through_proxy: ProxyFactory, tmp_path: Path) -> None:
    payload = bytes(range(256)) * 8 + b"\r\n--x--\r\n"
    with through_proxy("agent-protocol") as p, httpx.Client(base_url=p.url, timeout=10) as client:
        task = client.post("/ap/v1/agent/tasks", json={"input": "keep"}).json()
        up = client.post(f"/ap/v1/agent/tasks/{task['task_id']}/artifacts", files={"file": ("a.bin", payload)})
        assert up.status_code == 200
        direct = httpx.get(f"{p.upstream}/ap/v1/agent/tasks/{task['task_id']}/artifacts/{up.json()['artifact_id']}")
        proxied = client.get(f"/ap/v1/agent/tasks/{task['task_id']}/artifacts/{up.json()['artifact_id']}")
        assert proxied.content == direct.content == payload
        assert proxied.headers["content-type"] == direct.headers["content-type"]
        assert proxied.headers["content-disposition"] == direct.headers["content-disposition"]
    assert p.lines == []


def test_schema_violations_are_reported_and_named_in_a_header(through_proxy: ProxyFactory) -> None:
    with (
        through_proxy("agent-protocol", "ap-task-missing-id", errors=True) as p,
        httpx.Client(base_url=p.url, timeout=10) as client,
    ):
        answer = client.post("/ap/v1/agent/tasks", json={"input": "x"})
        assert answer.status_code == 200 and "task_id" not in answer.json()  # still reaches the client
        assert "AP-SCHEMA-005" in answer.headers[VIOLATIONS_HEADER].split(", ")
        clean = client.get("/ap/v1/agent/tasks")
        assert VIOLATIONS_HEADER not in clean.headers
    assert p.statuses()["AP-SCHEMA-005"] is Status.FAILED
    assert any(
        line.startswith("AP-SCHEMA-005 #1 POST /ap/v1/agent/tasks (createAgentTask) -> 200: ") for line in p.lines
    ), p.lines


def test_client_requests_are_judged_against_the_document(through_proxy: ProxyFactory) -> None:
    with through_proxy("agent-protocol") as p, httpx.Client(base_url=p.url, timeout=10) as client:
        assert client.get("/ap/v1/agent/tasks", params={"page_size": "ten"}).status_code == 422
    failed = p.failed()
    assert 'query parameter "page_size"="ten"' in failed["AP-CLIENT-001"]
    assert p.statuses()["AP-SCHEMA-006"] is Status.PASSED  # the mock refused it, as it should


def test_a_browsers_cors_preflight_is_forwarded_but_not_judged(through_proxy: ProxyFactory) -> None:
    preflight = {"Origin": "http://localhost:3000", "Access-Control-Request-Method": "POST"}
    with through_proxy("agent-protocol") as p, httpx.Client(base_url=p.url, timeout=10) as client:
        answer = client.options("/ap/v1/agent/tasks", headers=preflight)
        assert answer.headers.get("access-control-allow-origin")  # the mock's CORS answer reaches the browser
        assert client.post("/ap/v1/agent/tasks", json={"input": "x"}).status_code == 200
        # a preflight for a method the document does not serve on that path is still the client's doing
        client.options("/ap/v1/agent/tasks", headers={**preflight, "Access-Control-Request-Method": "DELETE"})
    failed = p.failed()
    assert list(failed) == ["AP-CLIENT-001"]
    assert "OPTIONS /ap/v1/agent/tasks is no operation" in failed["AP-CLIENT-001"]
    assert p.proxy.observer.tallies["AP-CLIENT-001"].broken == 1  # the documented preflight was not counted


def test_nothing_observed_is_never_passed(through_proxy: ProxyFactory) -> None:
    with through_proxy("synapse-agent") as p:
        pass
    result = p.result()
    assert {r.status for r in result.results} == {Status.NOT_VERIFIED}
    assert all(r.message.startswith("not observed: ") for r in result.results)


def test_report_endpoint_writes_the_usual_reports(tmp_path: Path) -> None:
    from mockserver import EmbeddedServer, MockConfig

    with (
        EmbeddedServer(MockConfig(protocols=("agent-protocol",))) as server,
        ProxyServer(ProxyConfig("agent-protocol", server.url, report_dir=tmp_path)) as proxy,
    ):
        httpx.post(f"{proxy.url}/ap/v1/agent/tasks", json={"input": "x"}, timeout=10)
        report = httpx.get(f"{proxy.url}/__conformance/report", timeout=10).json()
    assert {r["id"]: r["status"] for r in report["requirements"]}["AP-SCHEMA-005"] == "passed"
    assert sorted(p.name for p in tmp_path.iterdir()) == REPORT_FILES
    assert json.loads((tmp_path / "results.json").read_text())["stats"]["mode"] == "proxy"


def test_upstream_down_is_a_502_in_the_protocols_error_shape() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # closed again: nothing listens there
    for protocol, path, key in (
        ("agent-protocol", "/ap/v1/agent/tasks", "message"),
        ("synapse-agent", "/repo/v1/agent/session", "reason"),
        ("sgr-agent-core", "/health", "detail"),
    ):
        with ProxyServer(ProxyConfig(protocol, f"http://127.0.0.1:{port}")) as proxy:
            answer = httpx.get(proxy.url + path, timeout=10)
        assert answer.status_code == 502 and isinstance(answer.json()[key], str)


def test_a_stalling_upstream_is_cut_at_the_timeout() -> None:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]
        held: list[socket.socket] = []
        threading.Thread(target=lambda: held.append(listener.accept()[0]), daemon=True).start()
        with ProxyServer(ProxyConfig("agent-protocol", f"http://127.0.0.1:{port}", timeout=0.5)) as proxy:
            answer = httpx.get(proxy.url + "/ap/v1/agent/tasks", timeout=10)
        for conn in held:
            conn.close()
    assert answer.status_code == 504 and "sent nothing for 0.5 s" in answer.json()["message"]


def test_oversized_requests_are_refused_before_forwarding(through_proxy: ProxyFactory) -> None:
    from mockserver import EmbeddedServer, MockConfig

    with (
        EmbeddedServer(MockConfig(protocols=("agent-protocol",))) as server,
        ProxyServer(ProxyConfig("agent-protocol", server.url, max_request_bytes=1000)) as proxy,
    ):
        answer = httpx.post(
            proxy.url + "/ap/v1/agent/tasks",
            content=b"{" + b" " * 2000 + b"}",
            headers={"Content-Type": "application/json"},
            timeout=10,
        )
        assert answer.status_code == 413 and "message" in answer.json()
        assert proxy.observer.exchanges == 0


def test_a_judging_bug_never_stops_the_traffic(through_proxy: ProxyFactory) -> None:
    def broken(*_: object) -> list[str]:
        raise RuntimeError("a bug in a check")

    with through_proxy("agent-protocol") as p, httpx.Client(base_url=p.url, timeout=10) as client:
        p.proxy.observer.document.request_problems = broken  # type: ignore[method-assign]
        p.proxy.observer.checks.on_response = broken  # type: ignore[method-assign]
        answer = client.post("/ap/v1/agent/tasks", json={"input": "still served"})
    assert answer.status_code == 200 and answer.json()["input"] == "still served"
    assert any("internal error judging #1" in line and "a bug in a check" in line for line in p.lines), p.lines
