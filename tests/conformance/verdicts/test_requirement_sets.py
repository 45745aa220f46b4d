"""Frozen requirement sets (``--requirements``): a released set never changes, a run scoring it
gives the verdicts the releasing kit gave for its requirements, a newer requirement is reported
"not scored" and never decides the exit code, and a set the kit cannot score stops the run at once."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from conformance.cli.commands import main
from conformance.engine.runner import run
from conformance.evidence.diff import compare
from conformance.evidence.diff import load as load_report
from conformance.evidence.verify import check_files
from conformance.reporting import write_reports
from conformance.run.suites import suite
from conformance.run.targets import embedded
from conformance.selfcheck.catalogue import fault_options
from conformance.verdicts import sets
from conformance.verdicts.requirements import Authority, Level
from conformance.verdicts.results import RunResult, Status
from specs.documents import load

MANIFEST = Path(__file__).with_name("requirement-sets.json")
"""Each released set as it was released: ``ID level authority`` per requirement. Edited only to add
a newly released set; a set already in it never changes."""
SNAPSHOT = Path(__file__).parents[1] / "snapshots" / "selfcheck-seed0.json"
"""What the kit that released the sets gave against each fault (seed 0): exit code, blocked ones."""


def test_every_released_set_is_its_manifest() -> None:
    manifest: dict[str, list[str]] = json.loads(MANIFEST.read_text(encoding="utf-8"))
    carried = {
        name: [f"{rid} {f.level.value} {f.authority.value}" for rid, f in rset.requirements.items()]
        for name, rset in sets.released().items()
    }
    gone = sorted(set(manifest) - set(carried))
    assert not gone, f"released sets removed from the kit: {gone} (a released set stays)"
    for name, frozen in manifest.items():
        assert carried[name] == frozen, f"{name} changed since it was released: a set never changes; release a new one"
    new = sorted(set(carried) - set(manifest))
    assert not new, f"sets not in {MANIFEST.name} yet: {new}; add each as released, it is frozen from then on"


def test_each_protocol_has_a_set_of_the_first_release() -> None:
    for pid in ("agent-protocol", "neuro-san", "sgr-agent-core", "synapse-agent"):
        rset = sets.named("2026.12", pid)
        assert rset.name == f"{pid}/2026.12"
        assert not rset.missing(c.requirement.id for c in suite(pid).registry), f"{rset.name} holds ids the kit lacks"


def test_requirements_sets_lists_them(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["requirements", "--sets", "--protocol", "neuro-san"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("neuro-san/2026.12 ") and "24 requirements" in out
    assert main(["requirements", "--sets", "--format", "json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [s["name"] for s in listed] == list(sets.released())


def _older(monkeypatch: pytest.MonkeyPatch, pid: str, drop: tuple[str, ...], add: tuple[str, ...] = ()) -> str:
    """Pretend ``pid``'s 2026.12 set was released without ``drop`` (requirements added since) and
    with ``add`` (requirements the kit has since removed): the kit then is newer than the set."""
    rset = sets.named("2026.12", pid)
    kept = {rid: f for rid, f in rset.requirements.items() if rid not in drop}
    kept.update({rid: sets.Frozen(Level.MUST, Authority.DOCUMENT) for rid in add})
    older = replace(rset, requirements=kept)
    carried = {**sets.released(), older.name: older}
    monkeypatch.setattr(sets, "released", lambda: carried)
    return older.name


def test_a_set_holding_a_requirement_the_kit_lacks_is_refused_at_start(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    name = _older(monkeypatch, "agent-protocol", (), ("AP-GONE-001",))
    code = main(["run", "--protocol", "agent-protocol", "--requirements", name, "--report-dir", str(tmp_path / "r")])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2
    assert len(err) == 1 and "AP-GONE-001" in err[0] and name in err[0], err
    assert not (tmp_path / "r").exists()


def test_an_unknown_set_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--protocol", "neuro-san", "--requirements", "1999.01"]) == 2
    assert "no requirement set neuro-san/1999.01" in capsys.readouterr().err


NEWER = "NS-ERR-001"
"""A MUST ``ns-unknown-agent-ok`` breaks, and the requirement the pretended older set lacks."""
BREAKS_IT = "ns-unknown-agent-ok"


def _against(fault: str, rset: str, folder: Path) -> RunResult:
    declared = next(f for f in embedded().faults() if f.name == fault)
    with embedded().serve("neuro-san", faults=(fault,)) as server:
        options = fault_options(declared, server.url + load("neuro-san").info.base_path, exact=False)
        result = run(replace(options, only=(*options.only, "NS-CONN-"), requirement_set=rset))
    write_reports(result, folder)
    return result


def test_a_newer_requirement_runs_and_is_reported_not_scored(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Broken by the fault, the newer requirement still runs and shows its finding, reported not
    scored in every format; the run, scored on the set, passes."""
    name = _older(monkeypatch, "neuro-san", (NEWER,))
    result = _against(BREAKS_IT, name, tmp_path / "r")
    newer = next(r for r in result.results if r.requirement.id == NEWER)
    assert newer.status is Status.NOT_SCORED and newer.outcome is Status.FAILED and newer.findings
    assert newer.message.startswith(f"not scored (added after {name}): failed")
    assert result.unscored == [newer] and newer not in result.gating
    assert result.exit_code == 0 and all(r.status is Status.PASSED for r in result.scored)
    folder = tmp_path / "r"
    data = json.loads((folder / "results.json").read_text(encoding="utf-8"))
    item = next(r for r in data["requirements"] if r["id"] == NEWER)
    assert (item["status"], item["outcome"], data["requirement_set"]) == ("not scored", "failed", name)
    assert data["certificate"]["requirement_set"] == name
    assert "not scored" not in data["summary"]["must"]
    assert f"## Not scored: added after {name}" in (folder / "summary.md").read_text(encoding="utf-8")
    html = (folder / "report.html").read_text(encoding="utf-8")
    assert f"Not scored: added after {escape_html(name)}" in html and "s-not-scored" in html
    junit = (folder / "junit.xml").read_text(encoding="utf-8")
    assert f'name="{NEWER}"' in junit and "not scored (added after" in junit
    assert name in (folder / "badge.svg").read_text(encoding="utf-8")
    # the tools that read reports back take the word as every other verdict
    assert check_files(folder).problems == []
    assert load_report(folder).verdicts[NEWER] is Status.NOT_SCORED


def escape_html(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def test_the_same_run_unfrozen_fails_on_it(tmp_path: Path) -> None:
    """The control: today's registry scores the newer requirement, and the fault fails the run."""
    result = _against(BREAKS_IT, "", tmp_path / "r")
    assert result.exit_code == 1
    assert next(r for r in result.results if r.requirement.id == NEWER).status is Status.FAILED


def test_diff_reads_a_verdict_that_became_not_scored(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    name = _older(monkeypatch, "neuro-san", (NEWER,))
    old = tmp_path / "old"
    _against(BREAKS_IT, "", old)
    new = tmp_path / "new"
    _against(BREAKS_IT, name, new)
    diff = compare(load_report(old), load_report(new))
    moved = {m.id: (m.old, m.new, m.direction) for m in diff.moved}
    # neither worse nor better: it gated one run and never the other
    assert moved[NEWER] == (Status.FAILED, Status.NOT_SCORED, "rescored")
    assert not diff.worse and diff.exit_code == 0 and "1 rescored" in diff.summary()


def _snapshot() -> dict[str, Any]:
    recorded: dict[str, Any] = json.loads(SNAPSHOT.read_text(encoding="utf-8"))
    return recorded


FAULTS = ("ns-list-names-only", "ns-error-text-plain", "ns-stream-no-answer")
"""A few faults of the catalogue, each a whole run (the cheapest protocol's)."""


@pytest.mark.slow  # a whole run per fault
@pytest.mark.parametrize("fault", [None, *FAULTS])
def test_a_set_scores_as_the_kit_that_released_it(fault: str | None) -> None:
    """Scoring neuro-san/2026.12, a run against the mock and against faults of the catalogue gives,
    for the set's requirements, the verdicts its releasing kit recorded: the failures the fault
    declares, the blocked ones of the snapshot, the same exit code; nothing else fails."""
    rset = sets.named("2026.12", "neuro-san")
    catalogue = {f.name: f for f in embedded().faults()}
    declared = catalogue.get(fault or "")
    with embedded().serve("neuro-san", faults=(fault,) if fault else ()) as server:
        # the selfcheck's whole run of every requirement (the fault only names the protocol for the clean mock)
        options = fault_options(declared or catalogue[FAULTS[0]], server.url + load("neuro-san").info.base_path)
        result = run(replace(options, requirement_set=rset.name))
    ours = [r for r in result.results if r.requirement.id in rset]
    # requirements added since the release (NS-HOSTILE-001) are not scored, and only they
    assert len(ours) == len(rset.requirements) and not any(r.requirement.id in rset for r in result.unscored)
    failed = sorted(r.requirement.id for r in ours if r.status is Status.FAILED)
    blocked = sorted(r.requirement.id for r in ours if r.status is Status.BLOCKED)
    if declared is None:
        assert result.exit_code == 0 and all(r.status is Status.PASSED for r in ours)
        return
    assert failed == sorted(declared.breaks)
    assert {"exit_code": result.exit_code, "blocked": blocked} == _snapshot()[fault]
