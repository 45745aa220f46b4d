"""The reports of a ``--protocol all`` run as one: summary.md, junit.xml and report.html beside the
per-protocol folders, each built from the per-protocol writers so nothing is said twice."""

from __future__ import annotations

from html import escape
from pathlib import Path
from xml.etree import ElementTree as ET

from ..verdicts.results import RunResult
from .badge import level_reached, render_badge
from .junit import render_junit
from .markdown import render_markdown


def render_combined_markdown(runs: list[RunResult], folders: dict[str, str]) -> str:
    lines = [
        "# Conformance: every protocol",
        "",
        "| protocol | verdict | level reached | MUST | SHOULD | report |",
        "|---|---|---|---|---|---|",
    ]
    for run in runs:
        t = run.tally()
        verdict = run.verdict
        lines.append(
            f"| {run.protocol} | {verdict} | {level_reached(run)} | {t['must']['passed']}/{sum(t['must'].values())} "
            f"| {t['should']['passed']}/{sum(t['should'].values())} | {folders[run.protocol]}/summary.md |"
        )
    body = [render_markdown(run).replace("# Conformance:", "## Conformance:", 1) for run in runs]
    return "\n".join(lines) + "\n\n" + "\n".join(body)


def render_combined_junit(runs: list[RunResult]) -> str:
    root = ET.Element("testsuites", name="conformance")
    for run in runs:
        root.append(ET.fromstring(render_junit(run).split("\n", 1)[1]))
    ET.indent(root)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def render_combined_html(runs: list[RunResult], folders: dict[str, str]) -> str:
    rows = "".join(
        f"<tr><td>{render_badge(run)}</td><td><a href='{escape(folders[run.protocol])}/report.html'>"
        f"{escape(run.protocol)}</a></td><td>{escape(run.target)}</td><td>{run.duration_s:.1f} s</td></tr>"
        for run in runs
    )
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Conformance: every protocol</title>
<style>body{{font:14px/1.45 system-ui,sans-serif;margin:2em auto;max-width:1100px;padding:0 1em}}
table{{border-collapse:collapse;width:100%}} td,th{{border-bottom:1px solid #ddd;padding:.4em;text-align:left;
overflow-wrap:anywhere}}</style></head><body>
<h1>Conformance report: every protocol</h1>
<table><tr><th>result</th><th>protocol</th><th>target</th><th>time</th></tr>{rows}</table>
</body></html>
"""


def write_combined(runs: list[RunResult], root: Path, folders: dict[str, str]) -> list[Path]:
    root.mkdir(parents=True, exist_ok=True)
    out = {
        "summary.md": render_combined_markdown(runs, folders),
        "junit.xml": render_combined_junit(runs),
        "report.html": render_combined_html(runs, folders),
    }
    for name, text in out.items():
        (root / name).write_text(text, encoding="utf-8")
    return [root / name for name in out]
