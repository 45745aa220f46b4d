"""Report writers, one module per format, all fed from one ``RunResult``."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from ..results import RunResult
from .badge import render_badge
from .html import render_html
from .json import render_json
from .junit import render_junit
from .markdown import render_markdown

WRITERS: dict[str, Callable[[RunResult], str]] = {
    "results.json": render_json,
    "junit.xml": render_junit,
    "report.html": render_html,
    "summary.md": render_markdown,
    "badge.svg": render_badge,
}


def write_reports(run: RunResult, directory: Path) -> list[Path]:
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for name, render in WRITERS.items():
        path = directory / name
        path.write_text(render(run), encoding="utf-8")
        written.append(path)
    return written


__all__ = ["WRITERS", "render_badge", "render_html", "render_json", "render_junit", "render_markdown", "write_reports"]
