"""``conformance verify``: a report's certificate shows any edit, a changed document, and, run again
against a target, exactly the verdicts that came out otherwise."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conformance.cli.commands import main
from conformance.reporting.certificate import PLACEHOLDER, seal
from mockserver import EmbeddedServer, MockConfig


@pytest.fixture(scope="module")
def certified(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """The default run of one protocol against a mock that keeps serving, and its report."""
    folder = tmp_path_factory.mktemp("report")
    with EmbeddedServer(MockConfig(protocols=("agent-protocol",))) as server:
        assert (
            main(["run", "--protocol", "agent-protocol", "--base-url", server.url, "--report-dir", str(folder), "-q"])
            == 0
        )
        yield folder, server.url


def test_an_intact_report_verifies(certified: tuple[Path, str], capsys: pytest.CaptureFixture[str]) -> None:
    folder, _ = certified
    assert main(["verify", str(folder)]) == 0
    out = capsys.readouterr().out
    assert "ok: results.json intact (sha256:" in out and "report files checked" in out
    assert "ok: agent-protocol/openapi.json is the document this suite holds" in out


@pytest.mark.parametrize("name", ["results.json", "report.html"])
def test_any_edited_byte_shows(
    certified: tuple[Path, str], tmp_path: Path, name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    folder, _ = certified
    copy = tmp_path / "copy"
    copy.mkdir()
    for file in folder.rglob("*"):
        if file.is_file():
            target = copy / file.relative_to(folder)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(file.read_bytes())
    data = bytearray((copy / name).read_bytes())
    data[len(data) // 2] ^= 0x01  # one bit of one byte
    (copy / name).write_bytes(bytes(data))
    assert main(["verify", str(copy)]) == 1
    assert f"EDITED: {name}" in capsys.readouterr().out


def test_a_report_made_against_another_document_shows(
    certified: tuple[Path, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder, _ = certified
    report = json.loads((folder / "results.json").read_text(encoding="utf-8"))
    report["certificate"]["documents"]["agent-protocol/openapi.json"] = "sha256:" + "1" * 64
    report["certificate"]["digest"] = PLACEHOLDER
    report["certificate"]["files"] = {}
    (tmp_path / "results.json").write_text(seal(json.dumps(report, indent=2) + "\n"), encoding="utf-8")
    assert main(["verify", str(tmp_path)]) == 1
    assert (
        "EDITED: agent-protocol/openapi.json changed: the report was made against sha256:111" in capsys.readouterr().out
    )


@pytest.mark.slow  # two more whole runs of a protocol
def test_run_again_it_reproduces_every_verdict_and_names_exactly_what_a_fault_changed(
    certified: tuple[Path, str], capsys: pytest.CaptureFixture[str]
) -> None:
    folder, url = certified
    total = len(json.loads((folder / "results.json").read_text())["requirements"])
    assert main(["verify", str(folder), "--base-url", url]) == 0
    assert f"verify: {total}/{total} verdicts reproduced" in capsys.readouterr().out
    with EmbeddedServer(MockConfig(protocols=("agent-protocol",), faults=("ap-task-created-201",))) as faulty:
        assert main(["verify", str(folder), "--base-url", faulty.url]) == 1
    out = capsys.readouterr().out
    assert [line for line in out.splitlines() if line.startswith("CHANGED")] == [
        "CHANGED: AP-TASK-001: passed -> failed"
    ]
    assert f"verify: {total - 1}/{total} verdicts reproduced; 1 changed" in out
