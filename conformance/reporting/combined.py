"""The reports of a ``--protocol all`` run as one: summary.md, junit.xml and report.html beside the
per-protocol folders, each built from the per-protocol writers so nothing is said twice.

The combined page reads as a certificate: the overall verdict, what was judged (the products, the
suite version, the seeds, when), and per protocol its verdict, its counts in every state, the
digest of the document it was judged against and of its results.json (which certifies every other
file of its folder: ``conformance verify FOLDER``)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from html import escape
from pathlib import Path
from xml.etree import ElementTree as ET

from ..verdicts.results import RunResult, Status
from .badge import level_reached, render_badge
from .certificate import file_digest
from .html import STYLE, t
from .junit import render_junit
from .markdown import inline, render_markdown

STATES = tuple(s for s in Status if s not in (Status.ADVICE, Status.NOT_SCORED))
"""The verdicts a protocol's row counts (of what the document fixes; advice is counted apart, and
requirements newer than a scored set are not counted)."""


@dataclass(frozen=True, slots=True)
class Row:
    """One protocol of the certificate."""

    run: RunResult
    folder: str
    results_digest: str
    """sha256 of the protocol's results.json ("" when it is not beside the page)."""

    @property
    def document_digest(self) -> str:
        spec = self.run.meta.get("spec")
        digest = spec.get("sha256") if isinstance(spec, dict) else None
        return f"sha256:{digest}" if digest else ""

    @property
    def document(self) -> str:
        spec = self.run.meta.get("spec")
        return str(spec.get("document") or "") if isinstance(spec, dict) else ""


def overall(runs: list[RunResult]) -> str:
    """Every protocol's verdict in one: PASS only when each passed; FAIL when any failed; else
    TARGET ERROR (a protocol that could not be tested is never a pass)."""
    verdicts = {run.verdict for run in runs}
    if verdicts <= {"PASS"} and runs:
        return "PASS"
    return "FAIL" if "FAIL" in verdicts or not runs else "TARGET ERROR"


def _rows(runs: list[RunResult], root: Path | None, folders: dict[str, str]) -> list[Row]:
    rows = []
    for run in runs:
        folder = folders[run.protocol]
        results = root / folder / "results.json" if root is not None else None
        digest = file_digest(results.read_bytes()) if results is not None and results.is_file() else ""
        rows.append(Row(run, folder, digest))
    return rows


_EMBEDDED = re.compile(r"^(embedded reference mock) \(http://[^)]*\)$")


def implementation(run: RunResult) -> str:
    """The product as the certificate names it: the embedded mock without the free port each
    protocol's run got (one implementation, not four addresses of no use once the run is over)."""
    return _EMBEDDED.sub(r"\1", run.product)


def _facts(runs: list[RunResult]) -> list[tuple[str, str]]:
    """What the certificate is about, each once (a value the protocols differ in: each of them)."""

    def once(values: list[str]) -> str:
        return ", ".join(dict.fromkeys(v for v in values if v)) or "-"

    sets = once([r.requirement_set for r in runs])
    return [
        ("implementation", once([implementation(r) for r in runs])),
        ("suite version", once([r.suite_version for r in runs])),
        *([("requirements scored", f"{sets} (frozen)")] if sets != "-" else []),
        ("seed", once([str(r.seed) for r in runs])),
        ("hash seed", once([str(r.meta.get("hash_seed") or "") for r in runs])),
        ("started", min((r.started_at for r in runs), default="-")),
        ("finished", max((r.finished_at for r in runs), default="-")),
    ]


def _counts(run: RunResult) -> dict[str, int]:
    """Per state, the document's requirements of every level."""
    tally = run.tally()
    return {s.value: sum(level[s.value] for level in tally.values()) for s in STATES}


def _level(run: RunResult, level: str) -> str:
    c = run.tally()[level]
    return f"{c[Status.PASSED.value]}/{sum(c.values())}"


def render_combined_markdown(runs: list[RunResult], folders: dict[str, str], root: Path | None = None) -> str:
    rows = _rows(runs, root, folders)
    lines = [f"# Conformance: every protocol - {overall(runs)}", ""]
    lines += [f"- {name}: {inline(value)}" for name, value in _facts(runs)]
    lines += [
        "",
        "| protocol | verdict | level reached | MUST | SHOULD | MAY | "
        + " | ".join(s.value for s in STATES)
        + " | report |",
        "|---" * (7 + len(STATES)) + "|",
    ]
    for row in rows:
        run, counts = row.run, _counts(row.run)
        lines.append(
            f"| {run.protocol} | {run.verdict} | {level_reached(run)} | {_level(run, 'must')} | "
            f"{_level(run, 'should')} | {_level(run, 'may')} | "
            + " | ".join(str(counts[s.value]) for s in STATES)
            + f" | {row.folder}/summary.md |"
        )
    lines += ["", "| protocol | document | document sha256 | results.json sha256 |", "|---|---|---|---|"]
    lines += [
        f"| {r.run.protocol} | {r.document} | `{r.document_digest or '-'}` | `{r.results_digest or '-'}` |"
        for r in rows
    ]
    lines += ["", "Re-check a protocol: `python -m conformance verify FOLDER` (`--base-url URL`: run it again).", ""]
    body = [render_markdown(run, named_above=True).replace("# Conformance:", "## Conformance:", 1) for run in runs]
    return "\n".join(lines) + "\n" + "\n".join(body)


def render_combined_junit(runs: list[RunResult]) -> str:
    root = ET.Element("testsuites", name="conformance")
    for run in runs:
        root.append(ET.fromstring(render_junit(run).split("\n", 1)[1]))
    ET.indent(root)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def render_combined_html(runs: list[RunResult], folders: dict[str, str], root: Path | None = None) -> str:
    rows = _rows(runs, root, folders)
    verdict = overall(runs)
    klass = {"PASS": "v-pass", "TARGET ERROR": "v-error"}.get(verdict, "v-fail")
    facts = "".join(f"<tr><th>{escape(name)}</th><td>{t(value)}</td></tr>" for name, value in _facts(runs))
    heads = "".join(f"<th>{escape(s.value)}</th>" for s in STATES)

    def cell(label: str, value: str, klass: str = "") -> str:
        # each cell names its column: on a phone the row is shown as a card, without the header row
        return f"<td data-label='{escape(label, quote=True)}'{f' class={klass!r}' if klass else ''}>{value}</td>"

    protocols = "".join(
        f"<tr><td><a href='{escape(r.folder)}/report.html'>{escape(r.run.protocol)}</a><br>{render_badge(r.run)}</td>"
        + cell("verdict", escape(r.run.verdict), f"s-{'passed' if r.run.verdict == 'PASS' else 'failed'}")
        + cell("level reached", escape(level_reached(r.run)))
        + "".join(cell(lv.upper(), _level(r.run, lv)) for lv in ("must", "should", "may"))
        + "".join(cell(s.value, str(_counts(r.run)[s.value])) for s in STATES)
        + "</tr>"
        for r in rows
    )
    digests = "".join(
        f"<tr><td>{escape(r.run.protocol)}</td><td>{t(r.document)}<br><code>{escape(r.document_digest or '-')}</code>"
        f"</td><td><a href='{escape(r.folder)}/results.json'>{escape(r.folder)}/results.json</a><br>"
        f"<code>{escape(r.results_digest or '-')}</code></td></tr>"
        for r in rows
    )
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Conformance: every protocol - {verdict}</title>
<style>{STYLE}</style></head><body>
<h1>Conformance certificate: every protocol <span class="verdict {klass}">{verdict}</span></h1>
<table class="facts">{facts}</table>
<h2>Verdicts</h2>
<div class="scroll"><table class="tally cards"><tr><th>protocol</th><th>verdict</th><th>level reached</th><th>MUST</th>
<th>SHOULD</th><th>MAY</th>{heads}</tr>{protocols}</table></div>
<p>Counts are of the requirements the documents fix; practice advice is in each protocol's report.</p>
<h2>Documents and reports</h2>
<table><tr><th>protocol</th><th>document (sha256)</th><th>results (sha256)</th></tr>{digests}</table>
<p>Each protocol's results.json carries the digest of every file of its folder and of itself: re-check
one with <code>python -m conformance verify FOLDER</code>, or run it again with
<code>python -m conformance verify FOLDER --base-url URL</code>.</p>
</body></html>
"""


def write_combined(runs: list[RunResult], root: Path, folders: dict[str, str]) -> list[Path]:
    """The combined reports, after each protocol's own (the page names their digests)."""
    root.mkdir(parents=True, exist_ok=True)
    out = {
        "summary.md": render_combined_markdown(runs, folders, root),
        "junit.xml": render_combined_junit(runs),
        "report.html": render_combined_html(runs, folders, root),
    }
    for name, text in out.items():
        (root / name).write_text(text, encoding="utf-8")
    return [root / name for name in out]
