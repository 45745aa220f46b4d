"""summary.md: a table for a README or a pull-request comment, and each distinct failure with the
curl line that reproduces it, to paste."""

from __future__ import annotations

import re

from ..check.credentials import variables
from ..check.script import script_name, script_of
from ..verdicts.results import Finding, RequirementResult, RunResult, Status
from .clip import clip
from .coverage import coverage_lines

LOUD = frozenset({Status.FAILED.value, Status.ERROR.value, "stale"})
"""Verdicts that fail a run, set in bold (the words are every report's: ``RequirementResult.verdict``)."""
SHOWN_CURL = 4000
"""Characters of a curl line summary.md shows; a longer one (a large body) is left to its script."""

_LIVE = re.compile(r"(\\*)(<(?=[A-Za-z/!?])|&(?=#?\w+;))")
"""What GitHub's Markdown would read as a tag (``<b``, ``</``, ``<!--``) or an entity (``&amp;``),
with the backslashes before it (doubled, so that the escape below is not itself escaped)."""


def inline(text: str) -> str:
    """Text as it reads, on one line, that GitHub renders as the same text: a tag or an entity is
    backslash-escaped (``\\<b>``), not written as ``&lt;b&gt;``, so the raw file reads as well as
    the rendered one; a column break is escaped for tables."""
    text = text.replace("\r", " ").replace("\n", " ")
    text = _LIVE.sub(lambda m: m.group(1) * 2 + "\\" + m.group(2), text)
    return text.replace("|", "\\|")


def _cell(text: str, limit: int = 200) -> str:
    """One table cell: cut at a word (``clip``) before it is escaped, so no escape is cut in half."""
    return inline(clip(text.replace("\r", " ").replace("\n", " "), limit))


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


def _fence(text: str) -> str:
    """A fence longer than any run of backticks in ``text``, so the block holds it as it is."""
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    return "`" * max(3, longest + 1)


def _reproduce(finding: Finding, n: int, script: bool) -> list[str]:
    """The finding's curl line to paste (the deciding call's), and its script where it has one
    (``script``: ``write_scripts`` wrote ``reproduce/<requirement>-<n>.sh``)."""
    deciding = finding.deciding
    if deciding is None or not deciding.curl:
        return []
    sh = f"`sh reproduce/{script_name(finding, n)}`"
    if len(deciding.curl) > SHOWN_CURL:
        return [f"Its call is {len(deciding.curl)} characters long" + (f": {sh} sends it." if script else "."), ""]
    calls = len(finding.evidence)
    before = f"The last of its {calls} calls" if calls > 1 else "To reproduce it, paste"
    if calls > 1 and script:
        before += f" ({sh} sends them all from a fresh state)"
    names = variables([deciding])
    if names:
        before += f", with {' and '.join(names)} set in the environment"
    fence = _fence(deciding.curl)
    return [before + ":", "", f"{fence}sh", deciding.curl, fence, ""]


def _findings(run: RunResult) -> list[str]:
    lines: list[str] = []
    for res in run.document:
        for n, f in enumerate(res.findings, 1):
            status = f" -> {f.deciding.status}" if f.deciding and f.deciding.status is not None else ""
            count = f" ({f.count} times)" if f.count > 1 else ""
            head = f"### {res.requirement.id}: {inline(f.operation)}{status}{count}"
            lines += [head, "", inline(clip(f.message, 1000)), ""]
            script = script_of(f, run.base_url, state_dependent=bool(res.requirement.depends_on_state))
            lines += _reproduce(f, n, bool(script))
    return ["", "## Distinct failures", "", *lines] if lines else []


def render_markdown(run: RunResult, *, named_above: bool = False) -> str:
    """``named_above``: a section of the combined summary, whose head names the implementation."""
    target = run.target.replace("`", "'")
    verdict = run.verdict
    named = run.product != run.target  # --target-name/--target-version given; else the product is the URL
    what = [] if named_above or not named else [f"Implementation: **{inline(clip(run.product, 200))}**"]
    facts = [*what, f"target `{target}`", f"suite {run.suite_version}"]
    facts += [f"requirements **{run.requirement_set}** (frozen)"] if run.requirement_set else []
    facts += [f"seed {run.seed}"]
    facts += [f"level {run.level.value}", f"{run.duration_s:.1f} s"]
    head = " | ".join(facts)
    lines = [f"# Conformance: {run.protocol} - {verdict}", "", head[0].upper() + head[1:], ""]
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
    if run.unscored:
        lines += [
            "",
            f"## Not scored: added after {run.requirement_set}",
            "",
            f"This run scores the frozen set {run.requirement_set}. These newer requirements ran and show what "
            "they found; none of them counts or decides the exit code.",
            "",
            "| id | level | result | statement | detail |",
            "|---|---|---|---|---|",
            *_rows(run.unscored),
        ]
    lines += _findings(run)
    lines += coverage_lines(run)
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
