"""The admin API under /__mock/: reset, the request journal, documents, and clear 4xx for bad input."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from typing import Any

import httpx
import pytest
import yaml

from conformance.check.http import tls_context
from mockserver import EmbeddedServer
from specs.documents import load

Serve = Callable[..., AbstractContextManager[EmbeddedServer]]
AUTH = {"Authorization": "Bearer alice-token"}


@pytest.fixture
def client(serve: Serve) -> Iterator[httpx.Client]:
    with (
        serve(journal=100, job_seconds=0.05) as server,
        httpx.Client(base_url=server.url, timeout=10, verify=tls_context()) as c,
    ):
        yield c


def _counts(c: httpx.Client) -> dict[str, int]:
    tasks = c.get("/ap/v1/agent/tasks").json()["pagination"]["total_items"]
    agents = c.get("/agents").json()["total"]
    sessions = len(c.post("/repo/v1/agent/sessions/list", json={}, headers=AUTH).json()["page"])
    return {"agent-protocol": tasks, "sgr-agent-core": agents, "synapse-agent": sessions}


def _populate(c: httpx.Client) -> None:
    assert c.post("/ap/v1/agent/tasks", json={"input": "one two"}).status_code == 200
    with c.stream(
        "POST",
        "/v1/chat/completions",
        json={"model": "sgr_agent", "stream": True, "messages": [{"role": "user", "content": "owls"}]},
    ) as r:
        r.read()
    assert (
        c.post("/repo/v1/agent/session", json={"agentAccessLevel": "PUBLICLY_ACCESSIBLE"}, headers=AUTH).status_code
        == 201
    )


def test_reset_one_protocol_leaves_the_others(client: httpx.Client) -> None:
    _populate(client)
    assert _counts(client) == {"agent-protocol": 1, "sgr-agent-core": 1, "synapse-agent": 1}
    answer = client.post("/__mock/reset/agent-protocol")
    assert answer.status_code == 200 and answer.json() == {"reset": ["agent-protocol"]}
    assert _counts(client) == {"agent-protocol": 0, "sgr-agent-core": 1, "synapse-agent": 1}


def test_reset_all_and_the_mock_keeps_working(client: httpx.Client) -> None:
    _populate(client)
    assert sorted(client.post("/__mock/reset").json()["reset"]) == [
        "agent-protocol",
        "neuro-san",
        "sgr-agent-core",
        "synapse-agent",
    ]
    assert _counts(client) == {"agent-protocol": 0, "sgr-agent-core": 0, "synapse-agent": 0}
    _populate(client)  # handlers still hold the (emptied) stores
    assert _counts(client) == {"agent-protocol": 1, "sgr-agent-core": 1, "synapse-agent": 1}


def test_reset_unknown_protocol_is_404(client: httpx.Client) -> None:
    answer = client.post("/__mock/reset/nope")
    assert answer.status_code == 404
    assert "nope" in answer.json()["error"] and "agent-protocol" in answer.json()["error"]


def test_journal_records_requests_and_responses_newest_first(client: httpx.Client) -> None:
    client.delete("/__mock/journal")
    created = client.post("/ap/v1/agent/tasks", json={"input": "hello journal"}).json()
    client.get(f"/ap/v1/agent/tasks/{created['task_id']}")
    client.get("/ap/v1/agent/nothing")  # a path no operation serves is journalled too
    entries = client.get("/__mock/journal").json()["entries"]
    assert [e["operation"] for e in entries] == [None, "getAgentTask", "createAgentTask"]
    create = entries[2]
    assert create["protocol"] == "agent-protocol"
    assert create["request"]["method"] == "POST" and create["request"]["path"] == "/ap/v1/agent/tasks"
    assert create["request"]["body"]["text"] == '{"input":"hello journal"}'
    assert create["response"]["status"] == 200
    assert created["task_id"] in create["response"]["body"]["text"]
    assert entries[0]["response"]["status"] == 404
    assert all(e["latency_ms"] >= 0 for e in entries)
    assert entries[0]["id"] > entries[1]["id"] > entries[2]["id"]


def test_journal_filters_and_redacts(client: httpx.Client) -> None:
    client.delete("/__mock/journal")
    client.post("/repo/v1/agent/session", json={"agentAccessLevel": "PUBLICLY_ACCESSIBLE"}, headers=AUTH)
    client.get("/health")
    client.get("/health")
    only = client.get("/__mock/journal", params={"protocol": "synapse-agent"}).json()["entries"]
    assert [e["operation"] for e in only] == ["createAgentSession"]
    assert only[0]["request"]["headers"]["Authorization"] == "Bearer <redacted>"
    by_op = client.get("/__mock/journal", params={"operation": "health", "limit": 1}).json()
    assert len(by_op["entries"]) == 1 and by_op["total"] == 3
    assert client.get("/__mock/journal", params={"status": 201}).json()["entries"][0]["operation"] == (
        "createAgentSession"
    )


def test_journal_records_streams_frame_by_frame(client: httpx.Client) -> None:
    client.delete("/__mock/journal")
    with client.stream(
        "POST",
        "/v1/chat/completions",
        json={"model": "sgr_agent", "stream": True, "messages": [{"role": "user", "content": "owls"}]},
    ) as r:
        body = r.read()
    (entry,) = client.get("/__mock/journal", params={"operation": "createChatCompletion"}).json()["entries"]
    assert entry["response"]["frames"] == body.count(b"data: ")
    assert entry["response"]["body"]["text"] == body.decode()


def test_journal_is_bounded(serve: Serve) -> None:
    with serve(journal=3) as server, httpx.Client(base_url=server.url) as c:
        for _ in range(5):
            c.get("/health")
        journal = c.get("/__mock/journal").json()
        assert journal["size"] == 3 and len(journal["entries"]) == 3
        assert c.put("/__mock/journal", json={"size": 10**6}).status_code == 400


def test_journal_off_by_default_and_turned_on_at_run_time(serve: Serve) -> None:
    with serve() as server, httpx.Client(base_url=server.url) as c:
        c.get("/health")
        off = c.get("/__mock/journal")
        assert off.status_code == 409 and "--journal" in off.json()["error"]
        assert c.put("/__mock/journal", json={"size": 5}).json() == {"size": 5}
        c.get("/health")
        assert [e["operation"] for e in c.get("/__mock/journal").json()["entries"]] == ["health"]
        assert c.put("/__mock/journal", json={"size": 0}).status_code == 200
        assert c.get("/__mock/journal").status_code == 409


@pytest.mark.parametrize(
    ("method", "path", "kwargs", "status"),
    [
        ("GET", "/__mock/journal", {"params": {"protocol": "nope"}}, 404),
        ("GET", "/__mock/journal", {"params": {"operation": "nope"}}, 400),
        ("GET", "/__mock/journal", {"params": {"limit": "many"}}, 400),
        ("GET", "/__mock/journal", {"params": {"colour": "red"}}, 400),
        ("PUT", "/__mock/journal", {"json": {"size": "big"}}, 400),
        ("PUT", "/__mock/journal", {"content": b"{not json", "headers": {"Content-Type": "application/json"}}, 400),
        ("PUT", "/__mock/journal", {"content": b"size: 3", "headers": {"Content-Type": "text/csv"}}, 415),
        ("PUT", "/__mock/journal", {"content": b"x" * ((1 << 20) + 1)}, 413),
        ("POST", "/__mock/fixtures", {"content": b""}, 400),
        ("GET", "/__mock/nothing", {}, 404),
        ("DELETE", "/__mock/reset", {}, 405),
        ("GET", "/__mock/specs/nope.json", {}, 404),
        ("GET", "/__mock/specs/agent-protocol.xml", {}, 404),
    ],
)
def test_bad_admin_input_is_a_clear_4xx(
    client: httpx.Client, method: str, path: str, kwargs: dict[str, Any], status: int
) -> None:
    answer = client.request(method, path, **kwargs)
    assert answer.status_code == status
    assert answer.headers["Content-Type"].startswith("application/json")
    assert answer.json()["error"]


def test_yaml_bodies_are_accepted(client: httpx.Client) -> None:
    answer = client.put("/__mock/journal", content=b"size: 7\n", headers={"Content-Type": "application/yaml"})
    assert answer.status_code == 200 and answer.json() == {"size": 7}


def test_curl_d_bodies_are_read_as_json(client: httpx.Client) -> None:
    # curl -d labels a body application/x-www-form-urlencoded
    answer = client.put(
        "/__mock/journal", content=b'{"size": 9}', headers={"Content-Type": "application/x-www-form-urlencoded"}
    )
    assert answer.status_code == 200 and answer.json() == {"size": 9}


def test_index_lists_the_endpoints(client: httpx.Client) -> None:
    index = client.get("/__mock/").json()
    assert "POST /__mock/reset/{protocol} empty one protocol's state" in index["endpoints"]
    assert index["journal"] == {"size": 100, "entries": index["journal"]["entries"]}
    assert index["chaos"] == {"seed": 0, "rules": []}


@pytest.mark.parametrize("protocol", ["agent-protocol", "neuro-san", "sgr-agent-core", "synapse-agent"])
def test_each_document_at_a_stable_url(client: httpx.Client, protocol: str) -> None:
    document = load(protocol).raw
    assert client.get(f"/__mock/specs/{protocol}.json").json() == document
    as_yaml = client.get(f"/__mock/specs/{protocol}.yaml")
    assert as_yaml.headers["Content-Type"].startswith("application/yaml")
    assert yaml.safe_load(as_yaml.text) == document
    index = client.get("/__mock/").json()
    assert f"/__mock/specs/{protocol}.json" in index["protocols"][protocol]["documents"]


def test_admin_prefix_is_outside_every_protocol() -> None:
    for protocol in ("agent-protocol", "neuro-san", "sgr-agent-core", "synapse-agent"):
        spec = load(protocol)
        assert not any((spec.info.base_path + p).startswith("/__mock") for p in spec.raw["paths"])
