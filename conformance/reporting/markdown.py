"""summary.md: a table for a README or a pull-request comment."""

from __future__ import annotations

from ..results import RunResult, Status

ICON = {Status.PASSED: "pass", Status.FAILED: "**FAIL**", Status.SKIPPED: "not verified", Status.ERROR: "**ERROR**"}


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")[:200]


def render_markdown(run: RunResult) -> str:
    verdict = "PASS" if run.exit_code == 0 else ("TARGET ERROR" if run.fatal else "FAIL")
    lines = [
        f"# Conformance: {run.protocol} - {verdict}",
        "",
        f"Target: `{run.target}` | suite {run.suite_version} | seed {run.seed} | level {run.level.value} "
        f"| {run.duration_s:.1f} s",
        "",
    ]
    if run.fatal:
        lines += [f"> {run.fatal}", ""]
    lines += ["| level | passed | failed | not verified | error |", "|---|---|---|---|---|"]
    for level, counts in run.tally().items():
        lines.append(
            f"| {level.upper()} | {counts['passed']} | {counts['failed']} | {counts['skipped']} | {counts['error']} |"
        )
    lines += ["", "| id | level | result | statement | detail |", "|---|---|---|---|---|"]
    for res in run.results:
        r = res.requirement
        detail = "" if res.status is Status.PASSED else _cell(res.message)
        lines.append(f"| {r.id} | {r.level.value.upper()} | {ICON[res.status]} | {_cell(r.statement)} | {detail} |")
    return "\n".join(lines) + "\n"
