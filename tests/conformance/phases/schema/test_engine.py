"""The schema phase's registration on its own: which generic requirements a document gets."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from conformance.phases.schema.engine import _environment_read_once
from conformance.run.schema_requirements import SCHEMA_CHECKS, register_schema_requirements
from conformance.verdicts.requirements import Level, Registry
from specs.documents import Spec, load


def registered(protocol_id: str, prefix: str) -> dict[str, Level]:
    """The ids registered for the protocol's document under a prefix of this test's own, so that
    they plainly come from this registration and not from the protocol's suite."""
    spec = load(protocol_id)
    renamed = Spec(replace(spec.info, prefix=prefix), spec.path, spec.raw, spec.profile)
    registry = Registry(protocol_id)
    register_schema_requirements(registry, renamed)
    assert all(c.run is None and c.requirement.phase == "schema" for c in registry)
    return {c.requirement.id: c.requirement.level for c in registry}


def test_auth_enforcement_is_registered_only_for_a_document_that_declares_security() -> None:
    secured = registered("synapse-agent", "UNITSYN")
    open_ = registered("agent-protocol", "UNITAP")
    assert "UNITSYN-SCHEMA-010" in secured and "UNITAP-SCHEMA-010" not in open_
    applicable = {f"UNITAP-SCHEMA-{sc.number}" for sc in SCHEMA_CHECKS if sc.applies(load("agent-protocol"))}
    assert set(open_) == applicable
    # every agent-protocol operation documents ``default`` (any status), none a response header,
    # none a deletion, and the document declares no security: 002, 004, 009 and 010 do not apply
    assert {rid.rsplit("-", 1)[1] for rid in open_} == {"001", "003", "005", "006", "007", "008"}
    assert open_["UNITAP-SCHEMA-001"] is Level.MUST  # no 5xx


def test_every_registered_schema_requirement_names_a_check_and_the_document() -> None:
    spec = load("neuro-san")
    renamed = Spec(replace(spec.info, prefix="UNITNS"), spec.path, spec.raw, spec.profile)
    registry = Registry("neuro-san")
    register_schema_requirements(registry, renamed)
    numbers = {c.requirement.id.rsplit("-", 1)[1] for c in registry}
    assert numbers <= {sc.number for sc in SCHEMA_CHECKS} and "001" in numbers
    assert all(c.requirement.ref == f"{spec.info.document} (every operation)" for c in registry)


def test_the_environment_is_read_once_per_host_with_the_answers_requests_gives(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import requests.sessions
    import requests.utils

    monkeypatch.setenv("HTTP_PROXY", "http://proxy.invalid:3128")
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,.local")
    (tmp_path / ".netrc").write_text("machine api.example login u password p\n")
    monkeypatch.setenv("NETRC", str(tmp_path / ".netrc"))
    urls = ["http://127.0.0.1:8000/a?x=1", "http://api.example/a", "http://svc.local:9/b", "http://api.example/c"]
    expected = [(requests.utils.get_environ_proxies(u), requests.utils.get_netrc_auth(u)) for u in urls]
    sessions: Any = requests.sessions
    original = sessions.get_environ_proxies
    with _environment_read_once():
        assert sessions.get_environ_proxies is not original
        assert [(sessions.get_environ_proxies(u), sessions.get_netrc_auth(u)) for u in urls] == expected
        sessions.get_environ_proxies(urls[1])["http"] = "changed"  # a caller's copy: the next answer is intact
        assert sessions.get_environ_proxies(urls[1]) == expected[1][0]
    assert sessions.get_environ_proxies is original
    assert expected[0][0] == {} and expected[1][0] and expected[1][1] == ("u", "p")  # the case is not vacuous


# -- fair refusals: judged by what the document fixes ---------------------------------------------


def test_invalid_input_refused_with_any_4xx_is_rejected() -> None:
    """Where the document names no status for an error, any 4xx refuses it fairly (411, 413, 431 are
    not in schemathesis's own list)."""
    from conformance.phases.schema.engine import schemathesis_config
    from conformance.run.suites import suite

    spec = load("agent-protocol")
    requirements = [c.requirement for c in suite("agent-protocol").registry if c.requirement.phase == "schema"]
    config = schemathesis_config(spec, requirements, seed=0, max_examples=1, timeout=1, headers={})
    assert config["checks"]["negative_data_rejection"]["expected-statuses"] == ["4xx", "5xx"]


def test_cases_the_document_does_not_fix_as_valid_are_left_open() -> None:
    from conformance.phases.schema.engine import _open_cases, left_open

    upload = "POST /ap/v1/agent/tasks/{task_id}/artifacts"
    form = "multipart/form-data; boundary=x"
    with _open_cases(load("agent-protocol")):
        # its schema requires the file part; the document leaves the body itself optional
        assert "no body" in left_open(upload, None, None)
        assert "does not declare" in left_open(upload, {"file": b"x", "": "y"}, form)
        assert "does not declare" in left_open(upload, {"file": b"x", "extra": "y"}, form)
        assert left_open(upload, {"file": b"x", "relative_path": "a"}, form) == ""
        # a task's body requires nothing: no body is a valid create, to be accepted
        assert left_open("POST /ap/v1/agent/tasks", None, None) == ""
        assert left_open("POST /ap/v1/agent/tasks", {"unknown": 1}, "application/json") == ""
    with _open_cases(load("synapse-agent")):  # a required body is never absent in a valid case
        assert left_open("POST /agent/session", None, None) == ""


# -- naming a resource the target holds -------------------------------------------------------------


def _positive_cases(hooked: dict[str, tuple[str, ...]] | None) -> list[tuple[str, dict[str, Any], str]]:
    """Every NeuroSan operation's first positive cases, drawn with a fixed seed, with the naming hook
    for ``hooked`` (known path values) or without any hook: (operation, path parameters, body)."""
    from hypothesis import HealthCheck, Phase, given, settings
    from schemathesis.generation import GenerationMode

    from conformance.phases.draws import seed_only
    from conformance.phases.schema.engine import _naming_existing

    schema = load("neuro-san").schemathesis_schema({}, server="/")
    if hooked is not None:
        schema.hooks.register_hook_with_name(_naming_existing(hooked), "flatmap_case")
    seen: list[tuple[str, dict[str, Any], str]] = []
    for result in schema.get_all_operations():
        operation = result.ok()

        @settings(
            derandomize=True,
            max_examples=6,
            database=None,
            phases=[Phase.generate],
            suppress_health_check=list(HealthCheck),
        )
        @given(operation.as_strategy(generation_mode=GenerationMode.POSITIVE))
        def collect(case: Any) -> None:
            seen.append((case.operation.label, dict(case.path_parameters), repr(case.body)))

        with seed_only():  # the draws of the seed alone, as the phase's (not the test modules' literals)
            collect()
    return seen


def test_the_first_positive_case_of_each_operation_names_the_known_resource_and_no_other() -> None:
    """One case reaches every operation however few a setting draws: the first of each names the
    discovered agent, drawn as it would have been, its name replaced; the hook names no other case
    (random names still meet the unknown-resource answers; in a run, schemathesis's own feedback
    carries the answered name further)."""
    plain = _positive_cases(None)
    hooked = _positive_cases({"agent_name": ("hello_world",)})
    assert [label for label, _, _ in hooked] == [label for label, _, _ in plain]
    firsts = {label: i for i, (label, _, _) in reversed(list(enumerate(hooked)))}
    assert len(firsts) == 3  # connectivity, function, streaming_chat
    named = {i for i, (_, path, _) in enumerate(hooked) if path["agent_name"] == "hello_world"}
    assert named == set(firsts.values())
    for i in named:
        assert hooked[i][2] == plain[i][2] and plain[i][1]["agent_name"] != "hello_world"
