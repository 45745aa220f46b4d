"""summary.md: a table for a README or a pull-request comment."""

from __future__ import annotations

from ..verdicts.results import RequirementResult, RunResult, Status

LOUD = frozenset({Status.FAILED.value, Status.ERROR.value, "stale"})
"""Verdicts that fail a run, set in bold (the words are every report's: ``RequirementResult.verdict``)."""


def _cell(text: str, limit: int = 200) -> str:
    """One table cell: no row breaks, no column breaks, and no live HTML (GitHub renders tags
    in Markdown; a hostile target's text must stay text)."""
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return text.replace("|", "\\|").replace("\r", " ").replace("\n", " ")[:limit]


def _rows(results: list[RequirementResult]) -> list[str]:
    rows = []
    for res in results:
        r = res.requirement
        detail = "" if res.status is Status.PASSED else _cell(res.message)
        if res.baseline:
            detail = _cell(f"baseline: {res.baseline_reason}") + (f"; {detail}" if detail else "")
        word = f"**{res.verdict}**" if res.verdict in LOUD else res.verdict
        rows.append(f"| {r.id} | {r.level.value.upper()} | {word} | {_cell(r.statement)} | {detail} |")
    return rows


def render_markdown(run: RunResult) -> str:
    target = run.target.replace("`", "'")
    verdict = run.verdict
    product = _cell(run.product.replace("`", "'"), 200)
    lines = [
        f"# Conformance: {run.protocol} - {verdict}",
        "",
        f"Implementation: **{product}** | target `{target}` | suite {run.suite_version} | seed {run.seed} "
        f"| level {run.level.value} | {run.duration_s:.1f} s",
        "",
    ]
    if run.fatal:
        lines += [f"> {_cell(run.fatal, 2000)}", ""]
    lines += ["| level | passed | failed | blocked | not verified | error |", "|---|---|---|---|---|---|"]
    for level, counts in run.tally().items():
        lines.append(
            f"| {level.upper()} | {counts['passed']} | {counts['failed']} | {counts['blocked']} "
            f"| {counts[Status.NOT_VERIFIED.value]} | {counts['error']} |"
        )
    lines += ["", "| id | level | result | statement | detail |", "|---|---|---|---|---|"]
    lines += _rows(run.document)
    if run.practice:
        advice = run.advice_tally()
        lines += [
            "",
            "## Advice: practice, not the document",
            "",
            "What real servers and clients are observed to do where the document is silent. Not following it "
            f"never fails a run: {advice['passed']} followed, {advice['advice']} advice.",
            "",
            "| id | level | result | statement | detail |",
            "|---|---|---|---|---|",
            *_rows(run.practice),
        ]
    findings = [f for res in run.document for f in res.findings]
    if findings:
        lines += ["", "## Distinct failures", "", "| requirement | operation | count | status | message |"]
        lines.append("|---|---|---|---|---|")
        for f in findings:
            lines.append(
                f"| {f.requirement} | {_cell(f.operation)} | {f.count} | "
                f"{f.deciding.status if f.deciding else ''} | {_cell(f.message)} |"
            )
    if run.state_dependent:
        lines += [
            "",
            "## Verdicts that depend on the server's own state",
            "",
            "The same seed gives the same verdicts except for these, which a second run against the same "
            "server may move:",
            "",
        ]
        lines += [f"- {rid}: {_cell(why, 400)}" for rid, why in run.state_dependent.items()]
    return "\n".join(lines) + "\n"
