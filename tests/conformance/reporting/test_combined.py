"""The combined page of a ``--protocol all`` run is a certificate: the overall verdict, what was
judged (product, suite version, seed, date), each protocol's verdict and counts in every state,
and the digests of the documents and of each protocol's results.json."""

from __future__ import annotations

import re
from pathlib import Path

from conformance.reporting import write_reports
from conformance.reporting.certificate import file_digest
from conformance.reporting.combined import overall, write_combined
from conformance.verdicts.results import RequirementResult, RunResult, Status

from .test_reporting import make_run, req


def _runs() -> list[RunResult]:
    failing = make_run()
    failing.meta = {
        "target_name": "Acme Agents",
        "target_version": "2.1",
        "spec": {"document": "specs/agent-protocol/openapi.yml", "sha256": "ab" * 32},
        "hash_seed": "0",
    }
    passing = make_run()
    passing.protocol = "neuro-san"
    passing.meta = {**failing.meta, "spec": {"document": "specs/neuro-san/openapi.yaml", "sha256": "cd" * 32}}
    passing.results = [RequirementResult(req("T-PASS-001"), Status.PASSED, "passed")]
    return [failing, passing]


def test_the_combined_page_is_a_certificate(tmp_path: Path) -> None:
    runs = _runs()
    folders = {r.protocol: r.protocol for r in runs}
    for run in runs:
        write_reports(run, tmp_path / run.protocol)
    write_combined(runs, tmp_path, folders)
    page = (tmp_path / "report.html").read_text(encoding="utf-8")
    summary = (tmp_path / "summary.md").read_text(encoding="utf-8")
    assert overall(runs) == "FAIL" and overall(runs[1:]) == "PASS"
    assert '<h1>Conformance certificate: every protocol <span class="verdict v-fail">FAIL</span></h1>' in page
    assert summary.startswith("# Conformance: every protocol - FAIL")
    for text in (page, summary):
        assert "Acme Agents 2.1" in text and "9.9.9" in text and "42" in text
        assert "2025-01-01T00:00:00+00:00" in text and "2025-01-01T00:00:05+00:00" in text
        assert f"sha256:{'ab' * 32}" in text and f"sha256:{'cd' * 32}" in text
        for run in runs:  # each protocol's results.json, as it is on disk
            assert file_digest((tmp_path / run.protocol / "results.json").read_bytes()) in text
    # every state in one vocabulary: the failing run has one of each but advice
    row = re.search(r"\| agent-protocol \| FAIL \|[^\n]*", summary)
    assert row is not None
    assert "| passed | failed | not verified | error | blocked | report |" in summary
    assert row.group().endswith("| 1 | 1 | 1 | 2 | 0 | agent-protocol/summary.md |")
    assert "<th>not verified</th>" in page and "skipped" not in page
