"""Fixtures: loaded at start or through the admin API, behaving as if clients had created them;
a bad document is refused whole, with the reason."""

from __future__ import annotations

import re
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any

import httpx
import pytest
import yaml

from mockserver import EmbeddedServer
from mockserver.fixtures import MAX_OBJECTS
from tests.facts import fixtures_of, mocked, with_fixtures

Serve = Callable[..., AbstractContextManager[EmbeddedServer]]
DOCUMENT: dict[str, Any] = {pid: dict(fixtures_of(pid).document) for pid in with_fixtures()}
"""Every protocol's part of a fixtures document (its test facts), in one document."""


def _check_loaded(c: httpx.Client) -> None:
    for protocol in with_fixtures():
        fixtures_of(protocol).check(c)


def test_fixtures_through_the_admin_api_in_yaml(serve: Serve) -> None:
    with serve() as server, httpx.Client(base_url=server.url) as c:
        answer = c.post(
            "/__mock/fixtures", content=yaml.safe_dump(DOCUMENT).encode(), headers={"Content-Type": "application/yaml"}
        )
        assert answer.status_code == 200, answer.text
        assert answer.json()["loaded"] == {pid: dict(fixtures_of(pid).loaded) for pid in with_fixtures()}
        _check_loaded(c)


def test_fixtures_at_start_and_reset_empties_them(serve: Serve) -> None:
    with serve(fixtures=DOCUMENT) as server, httpx.Client(base_url=server.url) as c:
        _check_loaded(c)
        c.post("/__mock/reset")
        for protocol in with_fixtures():
            gone = fixtures_of(protocol).gone
            assert c.request(gone.method, gone.path, json=gone.json, headers=gone.headers).status_code == 404, protocol


@pytest.mark.parametrize("protocol", [pid for pid in mocked() if pid not in with_fixtures()])
def test_a_protocol_without_a_fixtures_reader_refuses_its_part(serve: Serve, protocol: str) -> None:
    with serve() as server, httpx.Client(base_url=server.url) as c:
        answer = c.post("/__mock/fixtures", json={protocol: {}})
        assert answer.status_code == 400 and "keeps no state" in answer.json()["error"], answer.text


@pytest.mark.parametrize(
    ("document", "message"),
    [
        ([], "maps protocol ids"),
        ({"nope": {}}, "not served"),
        ({"agent-protocol": {"tasks": [{"artifacts": [{"file_name": "x"}]}]}}, "exactly one of content"),
        ({"agent-protocol": {"tasks": [{"colour": "red"}]}}, r"tasks\[0\]: unknown field"),
        ({"agent-protocol": {"tasks": [{"task_id": "a"}, {"task_id": "a"}]}}, "already in use"),
        ({"sgr-agent-core": {"agents": [{"messages": [], "state": "dreaming"}]}}, "state: one of"),
        ({"synapse-agent": {"sessions": [{"owner": "mallory"}]}}, "configured users"),
        ({"synapse-agent": {"sessions": [{"owner": "alice", "agentAccessLevel": "ROOT"}]}}, "agentAccessLevel"),
        ({"sgr-agent-core": {"agents": [{"messages": []}] * (MAX_OBJECTS + 1)}}, f"at most {MAX_OBJECTS}"),
    ],
)
def test_a_bad_document_is_refused_whole(serve: Serve, document: Any, message: str) -> None:
    with serve() as server, httpx.Client(base_url=server.url) as c:
        good = {"agent-protocol": {"tasks": [{"input": "kept?"}]}}
        combined = {**good, **document} if isinstance(document, dict) and "agent-protocol" not in document else document
        answer = c.post("/__mock/fixtures", json=combined)
        assert answer.status_code == 400
        assert re.search(message, answer.json()["error"]), answer.json()
        assert c.get("/ap/v1/agent/tasks").json()["pagination"]["total_items"] == 0  # nothing was stored
