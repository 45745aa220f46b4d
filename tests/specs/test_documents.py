"""The spec registry: the four documents are valid, complete and loadable; broken ones fail clearly."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from openapi_spec_validator import validate

from conformance.cli import commands as cli
from specs import documents as specs
from specs.documents import PROTOCOLS, SpecError, load, read_document, specs_root

# The published Agent Protocol v1 document (seed 002), shipped byte for byte: its sha256.
AGENT_PROTOCOL_V1_SHA256 = "03c6d77a5245407f4b8d7b8f596b9b187f536638103e8106648c09796fa3ab0e"

# Every operation each seed names, written out one by one: a missing endpoint fails its own test.
SEED_OPERATIONS = [
    # Agent Protocol v1 (seed 002): 9 operations
    ("agent-protocol", "POST", "/ap/v1/agent/tasks"),
    ("agent-protocol", "GET", "/ap/v1/agent/tasks"),
    ("agent-protocol", "GET", "/ap/v1/agent/tasks/{task_id}"),
    ("agent-protocol", "GET", "/ap/v1/agent/tasks/{task_id}/steps"),
    ("agent-protocol", "POST", "/ap/v1/agent/tasks/{task_id}/steps"),
    ("agent-protocol", "GET", "/ap/v1/agent/tasks/{task_id}/steps/{step_id}"),
    ("agent-protocol", "GET", "/ap/v1/agent/tasks/{task_id}/artifacts"),
    ("agent-protocol", "POST", "/ap/v1/agent/tasks/{task_id}/artifacts"),
    ("agent-protocol", "GET", "/ap/v1/agent/tasks/{task_id}/artifacts/{artifact_id}"),
    # NeuroSan (seed 000): 3 operations
    ("neuro-san", "GET", "/api/v1/{agent_name}/connectivity"),
    ("neuro-san", "GET", "/api/v1/{agent_name}/function"),
    ("neuro-san", "POST", "/api/v1/{agent_name}/streaming_chat"),
    # SGR Agent Core (seed 001): 7 operations
    ("sgr-agent-core", "GET", "/health"),
    ("sgr-agent-core", "GET", "/v1/models"),
    ("sgr-agent-core", "POST", "/v1/chat/completions"),
    ("sgr-agent-core", "GET", "/agents"),
    ("sgr-agent-core", "GET", "/agents/{agent_id}/state"),
    ("sgr-agent-core", "POST", "/agents/{agent_id}/provide_clarification"),
    ("sgr-agent-core", "DELETE", "/agents/{agent_id}"),
    # Synapse agent chat (seed 003 and upstream): 8 operations
    ("synapse-agent", "POST", "/agent/session"),
    ("synapse-agent", "POST", "/agent/sessions/list"),
    ("synapse-agent", "POST", "/agent/session/history/{sessionId}"),
    ("synapse-agent", "POST", "/agent/chat/async/start"),
    ("synapse-agent", "GET", "/agent/chat/async/get/{jobId}"),
    ("synapse-agent", "POST", "/agent/chat/trace/{jobId}"),
    ("synapse-agent", "GET", "/agent/session/{sessionId}"),
    ("synapse-agent", "PUT", "/agent/session/{sessionId}"),
]


def _labels(protocol_id: str, profile: str | None = None) -> set[str]:
    return {op.label for op in load(protocol_id, profile).operations()}


# --- the shipped documents -----------------------------------------------------------------------


def test_registry_knows_exactly_the_four_protocols() -> None:
    assert sorted(PROTOCOLS) == ["agent-protocol", "neuro-san", "sgr-agent-core", "synapse-agent"]
    assert PROTOCOLS["synapse-agent"].base_path == "/repo/v1"
    assert {p.prefix for p in PROTOCOLS.values()} == {"AP", "NS", "SGR", "SYN"}


@pytest.mark.parametrize("protocol_id", sorted(PROTOCOLS))
def test_document_passes_openapi_spec_validator(protocol_id: str) -> None:
    raw = load(protocol_id).raw
    validate(raw)  # raises on any structural problem
    assert raw["openapi"].startswith("3.0.") if protocol_id == "agent-protocol" else raw["openapi"] == "3.2.0"


@pytest.mark.parametrize("protocol_id", sorted(PROTOCOLS))
def test_document_loads_in_openapi_core(protocol_id: str) -> None:
    from openapi_core import OpenAPI

    app = load(protocol_id).openapi
    assert isinstance(app, OpenAPI)
    assert load(protocol_id).openapi is app  # built once


@pytest.mark.parametrize("protocol_id", sorted(PROTOCOLS))
def test_document_loads_in_schemathesis(protocol_id: str) -> None:
    schema = load(protocol_id).schemathesis_schema()
    operations = [result.ok() for result in schema.get_all_operations()]
    found = {f"{op.method.upper()} {op.path}" for op in operations}
    assert found == _labels(protocol_id)
    assert schema is not load(protocol_id).schemathesis_schema()  # each run gets its own copy


@pytest.mark.parametrize(
    ("protocol_id", "method", "path"), SEED_OPERATIONS, ids=[f"{p}:{m} {u}" for p, m, u in SEED_OPERATIONS]
)
def test_seed_operation_is_in_the_document(protocol_id: str, method: str, path: str) -> None:
    spec = load(protocol_id)
    assert f"{method} {path}" in _labels(protocol_id)
    definition = spec.raw["paths"][path][method.lower()]
    assert definition.get("operationId"), "every operation needs an operationId (the mock binds by it)"
    assert definition.get("responses"), "every operation documents its responses"


@pytest.mark.parametrize("protocol_id", sorted(PROTOCOLS))
def test_operation_ids_are_unique(protocol_id: str) -> None:
    ids = [op.operation_id for op in load(protocol_id).operations()]
    assert len(ids) == len(set(ids))
    assert all(load(protocol_id).operation(i).operation_id == i for i in ids)


def test_unknown_operation_and_protocol_are_named() -> None:
    with pytest.raises(KeyError, match="noSuchOperation"):
        load("agent-protocol").operation("noSuchOperation")
    with pytest.raises(KeyError, match="unknown protocol 'a2a'; known: agent-protocol"):
        load("a2a")


def test_agent_protocol_document_is_the_published_v1_byte_for_byte() -> None:
    path = specs_root() / PROTOCOLS["agent-protocol"].document
    assert hashlib.sha256(path.read_bytes()).hexdigest() == AGENT_PROTOCOL_V1_SHA256


def test_load_is_cached_per_process() -> None:
    assert load("sgr-agent-core") is load("sgr-agent-core")
    assert load("neuro-san") is not load("neuro-san", "upstream")


# --- profiles ------------------------------------------------------------------------------------


def test_neuro_san_upstream_profile_adds_list() -> None:
    assert "GET /api/v1/list" not in _labels("neuro-san")
    upstream = _labels("neuro-san", "upstream")
    assert "GET /api/v1/list" in upstream
    assert _labels("neuro-san") < upstream  # nothing of the published contract is lost
    validate(load("neuro-san", "upstream").raw)


@pytest.mark.parametrize(("protocol_id", "profile"), [("neuro-san", "bogus"), ("agent-protocol", "upstream")])
def test_unknown_profile_is_a_spec_error(protocol_id: str, profile: str) -> None:
    with pytest.raises(SpecError) as caught:
        load(protocol_id, profile)
    assert f"protocol {protocol_id!r} has no profile {profile!r}" in str(caught.value)
    assert PROTOCOLS[protocol_id].document in str(caught.value)


# --- malformed documents -------------------------------------------------------------------------

MINIMAL: dict[str, Any] = {
    "openapi": "3.1.0",
    "info": {"title": "t", "version": "1"},
    "paths": {
        "/things": {
            "get": {
                "operationId": "listThings",
                "responses": {
                    "200": {
                        "description": "ok",
                        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Thing"}}},
                    }
                },
            }
        }
    },
    "components": {"schemas": {"Thing": {"type": "object"}}},
}


def _write(tmp_path: Path, name: str, content: str | dict[str, Any]) -> Path:
    path = tmp_path / name
    path.write_text(content if isinstance(content, str) else json.dumps(content), encoding="utf-8")
    return path


def _error(path: Path) -> str:
    with pytest.raises(SpecError) as caught:
        read_document(path)
    message = str(caught.value)
    assert message.startswith(f"{path}: "), message  # names the file first
    assert caught.value.path == str(path)
    assert "Traceback" not in message
    return message


def test_minimal_document_reads(tmp_path: Path) -> None:
    assert read_document(_write(tmp_path, "ok.json", MINIMAL))["paths"]["/things"]


def test_bad_yaml_names_line_and_problem(tmp_path: Path) -> None:
    path = _write(tmp_path, "bad.yaml", "openapi: 3.1.0\ninfo:\n  title: t\n  version: [1\npaths: {}\n")
    message = _error(path)
    assert "invalid YAML at line" in message
    assert "line 5" in message or "line 4" in message


def test_bad_json_names_line_and_column(tmp_path: Path) -> None:
    message = _error(_write(tmp_path, "bad.json", '{\n  "openapi": "3.1.0",\n  "info": {,}\n}'))
    assert "invalid JSON at line 3, column" in message


@pytest.mark.parametrize(("version", "shown"), [("2.0", "'2.0'"), (None, "None"), (3.1, "3.1"), ("4.0.0", "'4.0.0'")])
def test_wrong_or_missing_version(tmp_path: Path, version: object, shown: str) -> None:
    doc = {k: v for k, v in MINIMAL.items() if k != "openapi"}
    if version is not None:
        doc["openapi"] = version
    message = _error(_write(tmp_path, "v.json", doc))
    assert f"unsupported OpenAPI version {shown}" in message
    assert "expected 3.0.x, 3.1.x or 3.2.x" in message


def test_swagger_2_document_is_refused(tmp_path: Path) -> None:
    message = _error(_write(tmp_path, "swagger.yaml", "swagger: '2.0'\ninfo: {title: t, version: '1'}\npaths: {}\n"))
    assert "unsupported OpenAPI version None" in message


def test_dangling_ref_is_named(tmp_path: Path) -> None:
    doc = json.loads(json.dumps(MINIMAL))
    doc["paths"]["/things"]["get"]["responses"]["200"]["content"]["application/json"]["schema"] = {
        "$ref": "#/components/schemas/Missing"
    }
    message = _error(_write(tmp_path, "dangling.json", doc))
    assert "dangling $ref: #/components/schemas/Missing" in message


def test_invalid_structure_names_where(tmp_path: Path) -> None:
    doc = json.loads(json.dumps(MINIMAL))
    doc["paths"]["/things"]["get"]["responses"] = "everything is fine"
    message = _error(_write(tmp_path, "structure.json", doc))
    assert "not a valid OpenAPI 3.1.0 document" in message
    assert "responses" in message


def test_missing_info_is_invalid(tmp_path: Path) -> None:
    doc = {k: v for k, v in MINIMAL.items() if k != "info"}
    message = _error(_write(tmp_path, "noinfo.json", doc))
    assert "not a valid OpenAPI 3.1.0 document" in message
    assert "info" in message


def test_document_that_is_not_a_mapping(tmp_path: Path) -> None:
    assert "the document is not a mapping" in _error(_write(tmp_path, "list.yaml", "- openapi\n- 3.1.0\n"))


def test_missing_file(tmp_path: Path) -> None:
    assert "cannot read the file" in _error(tmp_path / "nowhere.yaml")


def test_invalid_utf8_file(tmp_path: Path) -> None:
    path = tmp_path / "latin1.yaml"
    path.write_bytes(b"openapi: 3.1.0\ninfo: {title: caf\xe9, version: '1'}\npaths: {}\n")
    assert "cannot read the file" in _error(path)


def test_cli_reports_spec_error_without_traceback(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    broken = tmp_path / "openapi.yaml"

    def broken_load(protocol_id: str, profile: str | None = None) -> specs.Spec:
        raise SpecError(broken, "invalid YAML at line 3, column 1: found character '\\t'")

    monkeypatch.setattr(specs, "load", broken_load)
    monkeypatch.setattr("conformance.run.plan.load", broken_load)
    code = cli.main(
        [
            "run",
            "--protocol",
            "agent-protocol",
            "--base-url",
            "http://127.0.0.1:9",
            "--report-dir",
            str(tmp_path / "r"),
            "-q",
        ]
    )
    err = capsys.readouterr().err
    assert code == 2
    assert f"error: {broken}: invalid YAML at line 3" in err
    assert "Traceback" not in err


# --- profile overlays that are broken ------------------------------------------------------------


@pytest.fixture
def private_specs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the neuro-san documents in tmp_path, with the registry pointed at it."""
    root = tmp_path / "specs"
    (root / "neuro-san").mkdir(parents=True)
    for name in ("openapi.yaml", "upstream-extras.yaml"):
        (root / "neuro-san" / name).write_bytes((specs_root() / "neuro-san" / name).read_bytes())
    monkeypatch.setattr(specs, "specs_root", lambda: root)
    return root / "neuro-san" / "upstream-extras.yaml"


def _uncached_load_error(profile: str = "upstream") -> str:
    with pytest.raises(SpecError) as caught:
        specs._load.__wrapped__("neuro-san", profile)  # bypass the per-process cache
    return str(caught.value)


def test_overlay_copy_loads(private_specs: Path) -> None:
    spec = specs._load.__wrapped__("neuro-san", "upstream")
    assert "GET /api/v1/list" in {op.label for op in spec.operations()}


def test_overlay_with_bad_yaml(private_specs: Path) -> None:
    private_specs.write_text("paths:\n  /api/v1/list: [\n", encoding="utf-8")
    message = _uncached_load_error()
    assert message.startswith(f"{private_specs}: cannot read the overlay")


def test_overlay_that_is_not_a_mapping(private_specs: Path) -> None:
    private_specs.write_text("- just\n- a list\n", encoding="utf-8")
    assert _uncached_load_error() == f"{private_specs}: the overlay is not a mapping"


def test_overlay_with_dangling_ref_names_the_overlay(private_specs: Path) -> None:
    private_specs.write_text(
        "paths:\n  /api/v1/list:\n    get:\n      operationId: list\n      responses:\n"
        "        '200':\n          description: ok\n          content:\n            application/json:\n"
        "              schema: {$ref: '#/components/schemas/Nowhere'}\n",
        encoding="utf-8",
    )
    message = _uncached_load_error()
    assert message.startswith(f"{private_specs}: dangling $ref: #/components/schemas/Nowhere")


def test_a_validated_document_is_remembered_by_its_content_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    markers = tmp_path / "cache" / "agent-conformance" / "validated-documents"
    read_document(_write(tmp_path, "ok.json", MINIMAL))
    assert len(list(markers.iterdir())) == 1  # the valid document left its marker

    import openapi_spec_validator

    def refuse(raw: Any) -> None:
        raise AssertionError("validated again")

    monkeypatch.setattr(openapi_spec_validator, "validate", refuse)
    read_document(_write(tmp_path, "again.json", MINIMAL))  # the same content: not validated again
    changed = json.loads(json.dumps(MINIMAL))
    changed["paths"]["/things"]["get"]["responses"] = "everything is fine"
    monkeypatch.undo()
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    message = _error(_write(tmp_path, "changed.json", changed))  # other content: validated, refused
    assert "not a valid OpenAPI 3.1.0 document" in message
    assert len(list(markers.iterdir())) == 1  # and it left no marker
