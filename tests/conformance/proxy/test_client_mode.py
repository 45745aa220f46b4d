"""The proxy for client developers: the client mode's exit code (only what traffic broke fails),
the selection and baseline as ``run`` takes them, and the traffic as HAR 1.2."""

from __future__ import annotations

import json
from pathlib import Path

import httpx

from conformance.cli.commands import main
from conformance.proxy.observer import Selection
from conformance.verdicts.baseline import Entry
from conformance.verdicts.requirements import Level
from conformance.verdicts.results import Status
from tests.har import har_problems

from .conftest import ProxyFactory

TASKS = "/ap/v1/agent/tasks"


def _create(url: str) -> None:
    assert (
        httpx.post(url + TASKS, json={"input": "hello", "additional_input": {"k": "v"}}, timeout=10).status_code == 200
    )


def test_client_mode_fails_only_on_what_traffic_broke(through_proxy: ProxyFactory) -> None:
    with (
        through_proxy("agent-protocol") as strict,
        through_proxy("agent-protocol", selection=Selection(client_mode=True)) as client,
    ):
        for proxied in (strict, client):
            _create(proxied.url)
    # the same clean traffic: most MUSTs were never exercised
    assert strict.result().exit_code == 1
    result = client.result()
    assert result.exit_code == 0, [r.requirement.id for r in result.results if r.status is Status.FAILED]
    assert any(r.status is Status.NOT_VERIFIED and r.requirement.level is Level.MUST for r in result.results)
    assert "no observed exchange broke a MUST" in result.exit_rule


def test_client_mode_fails_on_a_violation(through_proxy: ProxyFactory) -> None:
    with through_proxy("agent-protocol", "ap-task-created-201", selection=Selection(client_mode=True)) as proxied:
        httpx.post(proxied.url + TASKS, json={"input": "hello"}, timeout=10)
    result = proxied.result()
    assert result.exit_code == 1
    assert {r.requirement.id for r in result.results if r.status is Status.FAILED} == {"AP-TASK-001"}


def test_client_mode_with_nothing_exercised_is_not_a_pass(through_proxy: ProxyFactory) -> None:
    with through_proxy("agent-protocol", selection=Selection(client_mode=True)) as proxied:
        pass
    assert proxied.result().exit_code == 1  # no traffic showed nothing


def test_only_and_level_select_what_is_reported(through_proxy: ProxyFactory) -> None:
    selection = Selection(only=("AP-TASK-", "AP-SCHEMA-"), skip=("AP-SCHEMA-00",), level=Level.MUST)
    with through_proxy("agent-protocol", selection=selection) as proxied:
        _create(proxied.url)
    ids = {r.requirement.id for r in proxied.result().results}
    assert ids and all(i.startswith("AP-TASK-") or i.startswith("AP-SCHEMA-01") for i in ids), ids
    assert all(r.requirement.level is Level.MUST for r in proxied.result().results)


def test_an_expected_failure_does_not_fail_the_client_mode_and_a_stale_one_does(through_proxy: ProxyFactory) -> None:
    known = Entry("AP-TASK-001", "answers 201 (vendor issue 9)")
    with through_proxy(
        "agent-protocol", "ap-task-created-201", selection=Selection(expected_failures=(known,), client_mode=True)
    ) as proxied:
        httpx.post(proxied.url + TASKS, json={"input": "hello"}, timeout=10)
    result = proxied.result()
    assert result.exit_code == 0
    assert next(r for r in result.results if r.requirement.id == "AP-TASK-001").verdict == "expected failure"
    with through_proxy("agent-protocol", selection=Selection(expected_failures=(known,), client_mode=True)) as clean:
        _create(clean.url)
    assert clean.result().exit_code == 1  # stale: it passes now


def test_the_traffic_is_written_as_a_valid_har(through_proxy: ProxyFactory, tmp_path: Path) -> None:
    har = tmp_path / "traffic.har"
    with through_proxy("sgr-agent-core", "sgr-missing-model-header", har=har) as proxied:
        with httpx.stream(
            "POST",
            proxied.url + "/v1/chat/completions",
            json={"model": "sgr_agent", "stream": True, "messages": [{"role": "user", "content": "owls"}]},
            headers={"Authorization": "Bearer secret-token"},
            timeout=10,
        ) as stream:
            streamed = stream.read()
        httpx.get(proxied.url + "/v1/models", params={"x": "1"}, timeout=10)
        from conformance.proxy.report import write

        write(proxied.proxy.observer, tmp_path / "reports")
    doc = json.loads(har.read_text(encoding="utf-8"))
    assert har_problems(doc) == []
    chat, models = doc["log"]["entries"]
    assert chat["request"]["method"] == "POST" and chat["request"]["url"].endswith("/v1/chat/completions")
    assert {"name": "authorization", "value": "Bearer <redacted>"} in chat["request"]["headers"]
    assert chat["response"]["content"]["text"].encode() == streamed  # the whole stream, as forwarded
    assert chat["response"]["content"]["mimeType"].startswith("text/event-stream")
    assert [v["requirement"] for v in chat["_violations"]] == ["SGR-STREAM-003"]
    assert models["request"]["queryString"] == [{"name": "x", "value": "1"}] and "_violations" not in models


def test_cli_selection_mistakes_are_usage_errors(tmp_path: Path) -> None:
    base = ["proxy", "--protocol", "agent-protocol", "--upstream", "http://127.0.0.1:9"]
    assert main([*base, "--only", "NS-"]) == 2
    bad = tmp_path / "baseline.yaml"
    bad.write_text("expected_failures:\n  - {id: AP-NOPE-001, reason: x}\n", encoding="utf-8")
    assert main([*base, "--expected-failures", str(bad)]) == 2
