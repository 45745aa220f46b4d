"""Report writers, one module per format, all fed from one ``RunResult``; ``ReportFiles`` writes
them as an event handler, when a run finishes."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from ..run.events import Event, RunFinished
from ..verdicts.results import RunResult
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


class ReportFiles:
    """Handler: every report of each finished run (``RunFinished``), into ``directory(protocol)``;
    ``written`` keeps each run with its folder, in the order the runs finished."""

    def __init__(self, directory: Callable[[str], Path]) -> None:
        self.directory = directory
        self.written: list[tuple[RunResult, Path]] = []

    def handle(self, event: Event) -> None:
        if isinstance(event, RunFinished):
            folder = self.directory(event.result.protocol)
            write_reports(event.result, folder)
            self.written.append((event.result, folder))


__all__ = [
    "WRITERS",
    "ReportFiles",
    "render_badge",
    "render_html",
    "render_json",
    "render_junit",
    "render_markdown",
    "write_reports",
]
