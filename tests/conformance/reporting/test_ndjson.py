"""``--events FILE``: every line of a real run is valid against the schema the package ships."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema_rs
import pytest

from conformance.cli.commands import main
from conformance.reporting.ndjson import SCHEMA_PATH, schema
from conformance.verdicts.results import Status
from tests.hostile import closed_port_url

VALIDATOR = jsonschema_rs.Draft202012Validator(schema())


def lines(path: Path) -> list[dict[str, Any]]:
    parsed = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    for n, event in enumerate(parsed, 1):
        errors = [e.message for e in VALIDATOR.iter_errors(event)]
        assert not errors, f"line {n} ({event.get('event')}): {errors}"
    return parsed


def test_a_real_runs_events_validate_and_agree_with_results_json(tmp_path: Path) -> None:
    events = tmp_path / "events.jsonl"
    code = main(
        [
            "run",
            "--protocol",
            "agent-protocol",
            "--only",
            "AP-TASK-001",
            "--only",
            "AP-SCHEMA-001",
            "--max-examples",
            "2",
            "--report-dir",
            str(tmp_path / "r"),
            "--events",
            str(events),
            "-q",
        ]
    )
    assert code == 0
    stream = lines(events)
    names = [e["event"] for e in stream]
    assert names[0] == "run_started" and names[-1] == "run_finished"
    assert names.count("requirement_started") == names.count("requirement_finished") == 2
    assert "case_finished" in names and "stage_started" in names
    assert [e["phase"] for e in stream if e["event"] == "phase_started"] == ["preflight", "schema", "scenario"]
    results = json.loads((tmp_path / "r" / "results.json").read_text(encoding="utf-8"))
    finished = {e["result"]["id"]: e["result"]["status"] for e in stream if e["event"] == "requirement_finished"}
    assert finished == {r["id"]: r["status"] for r in results["requirements"]}
    assert stream[-1]["exit_code"] == results["exit_code"] == 0
    assert stream[-1]["summary"] == results["summary"]
    cases = [e for e in stream if e["event"] == "case_finished"]
    schema_result = next(
        e["result"] for e in stream if e["event"] == "requirement_finished" and e["result"]["id"] == "AP-SCHEMA-001"
    )
    assert schema_result["cases"] == len(cases)


def test_an_unusable_target_is_in_the_stream_too(tmp_path: Path) -> None:
    events = tmp_path / "events.jsonl"
    code = main(
        [
            "run",
            "--protocol",
            "agent-protocol",
            "--base-url",
            closed_port_url(),
            "--timeout",
            "1",
            "--report-dir",
            str(tmp_path / "r"),
            "--events",
            str(events),
            "-q",
        ]
    )
    assert code == 2
    stream = lines(events)
    assert [e["event"] for e in stream] == ["run_started", "phase_started", "fatal", "phase_finished", "run_finished"]
    assert stream[-1]["exit_code"] == 2 and "unreachable" in stream[-1]["fatal"]


def test_an_unwritable_events_file_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "blocker").write_text("a file where the folder would be", encoding="utf-8")  # a missing one is made
    code = main(["run", "--protocol", "agent-protocol", "--events", str(tmp_path / "blocker" / "e.jsonl")])
    assert code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: cannot write --events")


@pytest.mark.parametrize(
    "line",
    [
        {"event": "run_started", "time": "2026-01-01T00:00:00.000+00:00"},  # fields missing
        {"event": "liftoff", "time": "2026-01-01T00:00:00.000+00:00"},  # no such event
        {"event": "fatal", "time": "2026-01-01T00:00:00.000+00:00", "reason": "x", "extra": 1},  # unknown field
        {
            "event": "case_finished",
            "time": "t",
            "stage": "fuzzing",
            "operation": "GET /x",
            "outcome": "maybe",
            "checked": ["AP-SCHEMA-001"],
            "failed": [],
        },  # outcome outside its enum
    ],
)
def test_the_schema_rejects_malformed_lines(line: dict[str, Any]) -> None:
    assert not VALIDATOR.is_valid(line)


def test_the_schema_knows_every_status() -> None:
    """A status added to the results model must be added to the shipped schema too."""
    assert set(schema()["$defs"]["result"]["properties"]["status"]["enum"]) == {s.value for s in Status}


def test_the_schema_ships_inside_the_package() -> None:
    assert SCHEMA_PATH.parent.name == "conformance" and SCHEMA_PATH.is_file()


def test_an_event_stays_on_its_line_whatever_text_the_target_sent() -> None:
    """A finding quotes what the target answered (the edge corpus sends U+2028, U+2029 and NEL):
    JSON leaves them raw, and line readers such as str.splitlines break there."""
    from conformance.reporting.ndjson import one_line

    text = "a\x85b\u2028c\u2029d"
    encoded = one_line(json.dumps({"message": text}, ensure_ascii=False))
    assert len(encoded.splitlines()) == 1 and json.loads(encoded) == {"message": text}
