"""The landing page at ``/``: the protocols served with their base paths and documents, and the
admin endpoints, as HTML for a person and JSON for ``Accept: application/json``."""

from __future__ import annotations

import re
from collections.abc import Callable
from contextlib import AbstractContextManager

import httpx

from mockserver import EmbeddedServer
from mockserver.admin import ENDPOINTS
from specs.documents import protocol

Serve = Callable[..., AbstractContextManager[EmbeddedServer]]


def test_json_names_every_protocol_its_base_path_and_documents(serve: Serve) -> None:
    with serve() as server, httpx.Client(base_url=server.url) as c:
        answer = c.get("/", headers={"Accept": "application/json"})
        assert answer.status_code == 200 and answer.headers["Content-Type"].startswith("application/json")
        about = answer.json()
        served = {p["id"]: p for p in about["protocols"]}
        assert set(served) == {"agent-protocol", "neuro-san", "sgr-agent-core", "synapse-agent"}
        assert [served[p]["base_path"] for p in sorted(served)] == ["/ap/v1/agent/tasks", "/api/v1", "/", "/repo/v1"]
        for pid, protocol in served.items():
            document = c.get(protocol["documents"]["json"])  # each link leads to the document
            assert document.status_code == 200 and document.json()["openapi"] == protocol["openapi"], pid
            assert protocol["operations"] and c.get(protocol["documents"]["yaml"]).status_code == 200
        assert about["admin"]["prefix"] == "/__mock/" and about["admin"]["token_required"] is False
        assert len(about["admin"]["endpoints"]) == len(ENDPOINTS.strip().splitlines())


def test_html_for_a_person(serve: Serve) -> None:
    with serve(protocols=("agent-protocol",), admin_token="t0k") as server, httpx.Client(base_url=server.url) as c:
        page = c.get("/")
        assert page.status_code == 200 and page.headers["Content-Type"].startswith("text/html")
        text = page.text
        assert "<code>/ap/v1/agent/tasks</code>" in text and 'href="/__mock/specs/agent-protocol.json"' in text
        assert "POST /__mock/requests/count" in text and "Authorization: Bearer" in text  # a token is set
        assert "t0k" not in text and "<script" not in text
        assert re.search(r"<title>agent-mock [^<]+</title>", text)


def test_the_landing_page_is_behind_the_host_check(serve: Serve) -> None:
    with serve() as server, httpx.Client(base_url=server.url) as c:
        assert c.get("/", headers={"Host": "evil.example"}).status_code == 421


def test_each_protocol_names_the_suites_base_url_from_its_manifest_and_the_command(serve: Serve) -> None:
    with serve() as server, httpx.Client(base_url=server.url) as c:
        about = c.get("/", headers={"Accept": "application/json"}).json()
        page = c.get("/").text
    served = {p["id"]: p for p in about["protocols"]}
    assert served["synapse-agent"]["base_url"] == f"{server.url}/repo/v1"  # the one a newcomer gets wrong
    for pid, p in served.items():
        assert p["base_url"] == server.url + protocol(pid).base_path, pid
        auth = " --token alice-token --second-token bob-token" if pid == "synapse-agent" else ""
        assert p["run"] == f"python -m conformance run --protocol {pid} --base-url {p['base_url']}{auth}"
        assert f"<code>{p['base_url']}</code>" in page and p["run"] in page
    tokens = "--token alice-token --second-token bob-token"
    everything = f"python -m conformance run --protocol all --base-url {server.url} {tokens}"
    assert about["run_all"] == everything and everything in page


def test_the_command_names_a_token_it_was_given_only_by_variable(serve: Serve) -> None:
    with serve(protocols=("synapse-agent",), tokens={"carol": "s3cret"}) as server:
        about = httpx.get(server.url + "/", headers={"Accept": "application/json"}).json()
        page = httpx.get(server.url + "/").text
    assert about["protocols"][0]["run"].endswith('/repo/v1 --token "$TOKEN" --second-token "$SECOND_TOKEN"')
    assert "s3cret" not in page and "s3cret" not in str(about)
    assert about["run_all"] is None and "--protocol all" not in page  # it serves one protocol of four
