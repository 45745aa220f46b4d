"""``conformance diff OLD NEW`` and ``conformance history DIR...``: what changed between two runs'
reports, said from their results.json alone. The expectations here are computed from the two
results.json files each time, never written out: diff must name exactly what differs in them."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from conformance.cli.commands import main
from conformance.engine.runner import run
from conformance.reporting import write_reports
from conformance.run.targets import DeclaredFault, embedded
from conformance.selfcheck.catalogue import fault_options
from conformance.verdicts.results import ORDER, Status
from specs.documents import load
from tests.faultruns import CLEAN, FaultRun, FaultRuns, reads

PROTOCOL = "neuro-san"
"""The protocol of the cheapest runs. Each fault's report is the session's run of it (the one the
selfcheck judges, tests/faultruns.py), diffed against the session's clean run of the protocol."""
FAULTS = sorted((f for f in embedded().faults() if f.protocol == PROTOCOL), key=lambda f: f.name)
CHEAP = "ns-list-names-only"
"""One fault of one requirement, decided in a fraction of a second."""


def _report(fault: DeclaredFault, folder: Path, *, broken: bool) -> Path:
    """The fault's selfcheck run (its declared requirements and their phases; a control: every
    one), against the mock with the fault or without it, written as a report."""
    with embedded().serve(fault.protocol, faults=(fault.name,) if broken else ()) as server:
        result = run(fault_options(fault, server.url + load(fault.protocol).info.base_path, exact=False))
    write_reports(result, folder)
    return folder


def _diff(old: Path, new: Path, capsys: pytest.CaptureFixture[str], fmt: str = "json") -> tuple[int, str]:
    capsys.readouterr()
    code = main(["diff", str(old), str(new), "--format", fmt])
    return code, capsys.readouterr().out


def _expected(old: Path, new: Path) -> dict[str, Any]:
    """What differs between two results.json files, read here independently of conformance.evidence.diff."""

    def read(folder: Path) -> tuple[dict[str, str], set[str]]:
        items = json.loads((folder / "results.json").read_text(encoding="utf-8"))["requirements"]
        return {r["id"]: r["status"] for r in items}, {f["key"] for r in items for f in r["findings"]}

    (before, found_before), (after, found_after) = read(old), read(new)
    changed = sorted(
        (rid, before[rid], after[rid], ORDER.index(Status(after[rid])) > ORDER.index(Status(before[rid])))
        for rid in after
        if rid in before and before[rid] != after[rid]
    )
    return {
        "changed": changed,
        "added": {rid: s for rid, s in after.items() if rid not in before},
        "removed": {rid: s for rid, s in before.items() if rid not in after},
        "new": sorted(found_after - found_before),
        "gone": sorted(found_before - found_after),
    }


def _named(out: str) -> dict[str, Any]:
    data = json.loads(out)
    return {
        "changed": sorted((c["id"], c["old"], c["new"], c["worse"]) for c in data["changed"]),
        "added": data["added"],
        "removed": data["removed"],
        "new": sorted(f["key"] for f in data["findings"]["new"]),
        "gone": sorted(f["key"] for f in data["findings"]["gone"]),
    }


def _written(made: FaultRun, folder: Path) -> Path:
    write_reports(made.result, folder)
    return folder


@pytest.mark.slow
@pytest.mark.timeout(300)
@pytest.mark.parametrize("fault", [reads(f, CLEAN + PROTOCOL, f.name) for f in FAULTS], ids=lambda f: f.name)
def test_diff_names_exactly_what_one_fault_changed(
    fault: DeclaredFault, fault_runs: FaultRuns, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    clean = _written(fault_runs.get(CLEAN + PROTOCOL), tmp_path / "clean")
    broken = _written(fault_runs.get(fault.name), tmp_path / "broken")
    expected = _expected(clean, broken)
    code, out = _diff(clean, broken, capsys)
    assert _named(out) == expected
    assert code == (1 if any(worse for *_, worse in expected["changed"]) else 0)
    # the fault's declared breaks are among the requirements diff calls worse: it sees the fault
    worse = {rid for rid, _, _, got_worse in expected["changed"] if got_worse}
    assert set(fault.breaks) <= worse
    # the text names each change too, one line each
    code_text, text = _diff(clean, broken, capsys, "text")
    assert code_text == code
    for rid, old, new, got_worse in expected["changed"]:
        assert f"{'WORSE' if got_worse else 'BETTER':8} {rid}  {old} -> {new}" in text
    assert sum(line.startswith("+ finding ") for line in text.splitlines()) == len(expected["new"])
    # and the way back is the mirror image: better, never worse, findings gone
    back, out = _diff(broken, clean, capsys)
    assert back == 0
    assert _named(out) == _expected(broken, clean)


@pytest.fixture(scope="module")
def pair(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A clean and a one-fault report of one cheap requirement."""
    fault = next(f for f in FAULTS if f.name == CHEAP)
    return (
        _report(fault, tmp_path_factory.mktemp("clean"), broken=False),
        _report(fault, tmp_path_factory.mktemp("broken"), broken=True),
    )


def test_markdown_is_one_short_github_table(pair: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    clean, broken = pair
    code, out = _diff(clean, broken, capsys, "markdown")
    assert code == 1
    lines = out.splitlines()
    start = next(n for n, line in enumerate(lines) if line.startswith("|"))
    table = []
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        table.append(line)
    assert not any(line.startswith("|") for line in lines[start + len(table) :])  # one table
    header, separator, *rows = table
    cells = header.count(" | ") + 1
    assert header.startswith("| ") and header.endswith(" |") and re.fullmatch(r"\|(---\|)+", separator)
    assert separator.count("|") - 1 == cells and rows
    for row in rows:  # as many cells as the header (a pipe inside a cell is escaped)
        assert row.startswith("| ") and row.endswith(" |")
        assert len(re.split(r"(?<!\\) \| ", row[2:-2])) == cells, row
    expected = _expected(clean, broken)
    changed = {rid for rid, *_ in expected["changed"]} | set(expected["added"]) | set(expected["removed"])
    changed |= {key.split("|", 1)[0] for key in [*expected["new"], *expected["gone"]]}  # a key starts with its id
    assert len(rows) == len(changed)
    assert "| worse | NS-LIST-001 | passed | failed |" in out
    assert len(lines) <= 30 and len(out) <= 3000  # a short comment for a one-fault change


def test_the_same_report_twice_is_no_change(pair: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    clean, _ = pair
    code, out = _diff(clean, clean, capsys, "text")
    assert code == 0 and out.splitlines()[-1] == "diff: no change"


def test_a_requirement_only_one_report_holds_is_added_or_removed(
    pair: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    clean, broken = pair
    data = json.loads((broken / "results.json").read_text(encoding="utf-8"))
    data["requirements"][0]["id"] = "NS-NEW-999"
    (tmp_path / "results.json").write_text(json.dumps(data), encoding="utf-8")
    code, out = _diff(clean, tmp_path, capsys)
    assert _named(out) == _expected(clean, tmp_path)
    old_id = json.loads((clean / "results.json").read_text(encoding="utf-8"))["requirements"][0]["id"]
    assert json.loads(out)["added"] == {"NS-NEW-999": "failed"} and old_id in json.loads(out)["removed"]
    assert code == 0  # nothing both hold got worse


def test_not_a_report_and_different_protocols_are_usage_errors(
    pair: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    clean, _ = pair
    assert main(["diff", str(tmp_path), str(clean)]) == 2
    assert "is not a report" in capsys.readouterr().err
    data = json.loads((clean / "results.json").read_text(encoding="utf-8"))
    (tmp_path / "results.json").write_text(json.dumps({**data, "protocol": "agent-protocol"}), encoding="utf-8")
    assert main(["diff", str(tmp_path), str(clean)]) == 2
    assert "different protocols: agent-protocol and neuro-san" in capsys.readouterr().err
    assert main(["history", str(tmp_path), str(clean)]) == 2
    several = tmp_path / "all"  # a run of several protocols: a folder each, diff says which to compare
    (several / PROTOCOL).mkdir(parents=True)
    (several / PROTOCOL / "results.json").write_bytes((clean / "results.json").read_bytes())
    capsys.readouterr()
    assert main(["diff", str(several), str(clean)]) == 2
    said = capsys.readouterr().err
    assert f"holds a report per protocol ({PROTOCOL}): compare one, e.g. {several / PROTOCOL}" in said


def test_history_is_one_line_per_run_oldest_first(
    pair: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Clean, then the fault, then clean again (the fault fixed), given in another order."""
    clean, broken = pair
    runs = []
    for day, source in enumerate((clean, broken, clean), 1):
        folder = tmp_path / f"day{day}"
        folder.mkdir()
        data = json.loads((source / "results.json").read_text(encoding="utf-8"))
        (folder / "results.json").write_text(json.dumps({**data, "started_at": f"2026-01-0{day}T12:00:00+00:00"}))
        runs.append(folder)
    capsys.readouterr()
    assert main(["history", str(runs[2]), str(runs[0]), str(runs[1])]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.rsplit("(", 1)[1].rstrip(")") for line in lines] == [str(r) for r in runs]
    assert lines[0].startswith("2026-01-01 12:00  suite ") and "first run" in lines[0]
    assert "1 failed" in lines[1] and "since the previous: 1 worse (NS-LIST-001)" in lines[1]
    assert "since the previous: 0 worse, 1 better" in lines[2]
    assert main(["history", *map(str, runs), "--format", "markdown"]) == 0
    table = [line for line in capsys.readouterr().out.splitlines() if line.startswith("|")]
    assert table[0] == (
        "| run | suite | passed | advice | not scored | not verified | blocked | error | failed | since the previous |"
    )
    assert len(table) == 2 + 3 and "| first run |" in table[2] and "1 worse (NS-LIST-001)" in table[3]
