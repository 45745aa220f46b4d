"""Report writers, one module per format, all fed from one ``RunResult``; ``ReportFiles`` writes
them as an event handler, when a run finishes."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from ..run.events import Event, RunFinished
from ..verdicts.results import RunResult
from .badge import render_badge
from .certificate import digests_of
from .document import render_document
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
    "document.html": render_document,
}


def write_reports(run: RunResult, directory: Path, sign_key: Path | None = None) -> list[Path]:
    """Every report; results.json last, carrying the digest of each other file and its own; with
    ``sign_key``, signature.json after it (``signature.py``: the key's signature of that digest)."""
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for name, render in WRITERS.items():
        if name != "results.json":
            path = directory / name
            path.write_text(render(run), encoding="utf-8")
            written.append(path)
    written += write_scripts(run, directory)
    names = [p.relative_to(directory).as_posix() for p in written]
    results = directory / "results.json"
    results.write_text(render_json(run, digests_of(directory, names)), encoding="utf-8")
    if sign_key is not None:
        from .signature import private_key, sign

        return [results, *written, sign(directory, private_key(sign_key))]
    return [results, *written]


SCRIPTS = "reproduce"
"""The folder of a report that holds each finding's script (``reproduce/AP-TASK-002-1.sh``)."""


def write_scripts(run: RunResult, directory: Path) -> list[Path]:
    """Each finding's reproduction as a runnable ``sh`` script."""
    from ..check.script import script_name, script_of

    written = []
    for res in run.results:
        for n, finding in enumerate(res.findings, 1):
            text = script_of(finding, run.base_url, state_dependent=bool(res.requirement.depends_on_state))
            if text:
                path = directory / SCRIPTS / script_name(finding, n)
                path.parent.mkdir(exist_ok=True)
                path.write_text(text, encoding="utf-8")
                path.chmod(0o755)
                written.append(path)
    return written


class ReportFiles:
    """Handler: every report of each finished run (``RunFinished``), into ``directory(protocol)``,
    signed with ``sign_key(protocol)`` (None: unsigned); ``written`` keeps each run with its folder,
    in the order the runs finished. A run whose target the preflight found unusable (``fatal``:
    exit 2) tested nothing, so it gets no folder: its one error line says why, and ``unusable``
    keeps it."""

    def __init__(
        self, directory: Callable[[str], Path], sign_key: Callable[[str], Path | None] = lambda _: None
    ) -> None:
        self.directory = directory
        self.sign_key = sign_key
        self.written: list[tuple[RunResult, Path]] = []
        self.unusable: list[RunResult] = []

    def handle(self, event: Event) -> None:
        if isinstance(event, RunFinished) and event.result.fatal is not None:
            self.unusable.append(event.result)
        elif isinstance(event, RunFinished):
            folder = self.directory(event.result.protocol)
            write_reports(event.result, folder, self.sign_key(event.result.protocol))
            self.written.append((event.result, folder))


__all__ = [
    "SCRIPTS",
    "WRITERS",
    "ReportFiles",
    "render_badge",
    "render_document",
    "render_html",
    "render_json",
    "render_junit",
    "render_markdown",
    "write_reports",
    "write_scripts",
]
