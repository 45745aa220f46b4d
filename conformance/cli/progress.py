"""What the CLI shows on stderr while a run works, as event handlers: bars per phase on a terminal
(``ProgressBars``), plain lines in CI logs and pipes (``ProgressLines``), and ``-v``'s evidence.
A target found unusable (``Fatal``) is not progress: the CLI prints its one error line, even under -q."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TextIO

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, ProgressColumn, Task, TaskID, TextColumn
from rich.text import Text

from conformance.reporting.clip import clip
from conformance.run.events import (
    CaseFinished,
    Event,
    PhaseFinished,
    PhaseStarted,
    RequirementFinished,
    RunFinished,
    RunStarted,
    StageStarted,
)
from conformance.verdicts.results import Status

PHASE_TITLES = {
    "preflight": "preflight",
    "schema": "property-based",
    "model": "model-based",
    "scenario": "scenarios",
}


class ProgressLines:
    """CI logs and pipes: a line as each phase starts (and each stage of the property-based one,
    which can run for minutes), a line for each requirement that did not pass as it is decided,
    and one line as each phase ends with its verdict counts and duration. A passed requirement is
    counted, not listed, as the bars do: a run is mostly passes, and a log of hundreds of
    ``passed`` lines hides the few that are not. Every line names its protocol, so the lines of a
    parallel ``--protocol all`` stay readable interleaved. No colour: logs show escapes raw."""

    def __init__(self, write: Callable[[str], None]) -> None:
        self.write = write
        self.protocol = ""
        self.counts: dict[str, int] = {}
        self.cases = 0
        self.failing_cases = 0

    def handle(self, event: Event) -> None:
        if isinstance(event, RunStarted):
            self.protocol = event.protocol
        elif isinstance(event, PhaseStarted):
            self.counts, self.cases, self.failing_cases = {}, 0, 0
            if event.requirements:  # the preflight has none: it is over in a moment, or fatal
                count = len(event.requirements)
                title = PHASE_TITLES.get(event.phase, event.phase)
                self.write(f"{self.protocol}: {title} phase ({count} requirement{'s' * (count != 1)})")
        elif isinstance(event, StageStarted):
            self.write(f"{self.protocol}: schema phase: {event.stage}")
        elif isinstance(event, CaseFinished):
            self.cases += 1
            self.failing_cases += event.outcome != "passed"
        elif isinstance(event, RequirementFinished):
            res = event.result
            self.counts[res.verdict] = self.counts.get(res.verdict, 0) + 1
            if res.gates_ok and res.status is Status.PASSED:
                return
            self.write(
                f"[{event.index}/{event.total}] {res.requirement.id} {res.verdict}"
                + (f": {clip(res.message, 300)}" if res.message else "")
                + (f" (baseline: {res.baseline_reason})" if res.baseline else "")
            )
        elif isinstance(event, PhaseFinished) and self.counts:
            counts = ", ".join(f"{n} {verdict}" for verdict, n in self.counts.items())
            cases = f"; {self.cases} cases, {self.failing_cases} failing" if self.cases else ""
            title = PHASE_TITLES.get(event.phase, event.phase)
            self.write(f"{self.protocol}: {title} phase done in {event.duration_s:.1f} s: {counts}{cases}")


class FailureEvidence:
    """``-v``: each failed requirement's distinct failures as they are decided, with the exchange
    that decided each and the curl line that replays it."""

    def __init__(self, write: Callable[[str], None]) -> None:
        self.write = write

    def handle(self, event: Event) -> None:
        if not isinstance(event, RequirementFinished) or event.result.status is not Status.FAILED:
            return
        res = event.result
        self.write(f"{res.requirement.id} failed: {len(res.findings)} distinct failure(s)")
        for finding in res.findings:
            self.write(f"  [{finding.count}x] {finding.key}")
            self.write(f"    {clip(finding.message, 500)}")
            deciding = finding.deciding
            if deciding is not None:
                answer = f"HTTP {deciding.status}" if deciding.status is not None else f"no answer: {deciding.error}"
                self.write(f"    {deciding.method} {deciding.url} -> {answer}")
                if deciding.response_body:
                    self.write(f"    {clip(deciding.response_body, 300)}")
                self.write(f"    {clip(deciding.curl, 2000)}")


_STYLE = {
    "passed": "green",
    "failed": "bold red",
    "error": "bold magenta",
    "not verified": "yellow",
    "blocked": "yellow",
    "advice": "blue",
    "not scored": "dim",
    "expected failure": "cyan",
    "stale": "bold red",
}


class PhaseTime(ProgressColumn):
    """The phase's elapsed time: live while it runs, the run's own measure once it finished. A
    later protocol of a parallel run is drawn from relayed events in a moment; the clock of the
    drawing would show 0:00:00 for work that took seconds."""

    def render(self, task: Task) -> Text:
        seconds = task.fields.get("took")
        if seconds is None:
            seconds = task.finished_time if task.finished else task.elapsed
        total = int(seconds or 0)
        return Text(f"{total // 3600}:{total // 60 % 60:02d}:{total % 60:02d}", style="progress.elapsed")


class ProgressBars:
    """On a terminal: one bar per phase with its counts, coloured verdicts, and each requirement
    that did not pass printed above the bars as it is decided. The property-based phase counts
    generated cases (their number is not known in advance, so its bar pulses); the model-based and
    scenario phases count requirements. A context manager: leaving it stops the live display even
    when the run raised."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self.protocol = ""
        self.progress: Progress | None = None
        self.task: TaskID | None = None
        self.phase = ""
        self.counts: dict[str, int] = {}
        """Verdicts decided in the current phase, by verdict word."""
        self.failing_cases = 0
        self.stage = ""

    def __enter__(self) -> ProgressBars:
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop()

    def _start(self) -> Progress:
        progress = Progress(
            TextColumn("{task.description}"),
            BarColumn(bar_width=30),
            MofNCompleteColumn(),
            TextColumn("{task.fields[counts]}"),
            PhaseTime(),
            console=self.console,
            transient=False,
        )
        progress.start()
        return progress

    def _stop(self) -> None:
        if self.progress is not None:
            self.progress.stop()
            self.progress = None

    def write(self, line: str) -> None:
        """A line above the bars as it is (``-v``'s evidence): never wrapped at the console's width,
        so a curl line pastes as one command, and never read as markup."""
        console = self.progress.console if self.progress is not None else self.console
        console.print(line, soft_wrap=True, markup=False, highlight=False, emoji=False)

    def _counts(self) -> str:
        parts = [f"[{_STYLE.get(k, 'white')}]{n} {k}[/]" for k, n in self.counts.items() if n]
        if self.failing_cases:
            parts.append(f"[red]({self.failing_cases} failing cases)[/]")
        return " ".join(parts)

    def _update(self, advance: int = 0) -> None:
        if self.progress is not None and self.task is not None:
            label = f"{self.protocol} {PHASE_TITLES.get(self.phase, self.phase)}"
            if self.stage:
                label += f" ({self.stage})"
            self.progress.update(self.task, advance=advance, description=label, counts=self._counts())

    def handle(self, event: Event) -> None:
        if isinstance(event, RunStarted):
            self._stop()
            self.protocol = event.protocol
            self.progress = self._start()
        elif isinstance(event, PhaseStarted) and self.progress is not None:
            self.phase, self.stage, self.counts, self.failing_cases = event.phase, "", {}, 0
            # the schema phase's cases are not known in advance: its bar pulses (total None)
            total = None if event.phase == "schema" else (len(event.requirements) or 1)
            self.task = self.progress.add_task("", total=total, counts="", took=None)
            self._update()
        elif isinstance(event, StageStarted):
            self.stage = event.stage
            self._update()
        elif isinstance(event, CaseFinished):
            self.failing_cases += event.outcome != "passed"
            self._update(advance=1)
        elif isinstance(event, RequirementFinished) and self.progress is not None:
            res = event.result
            self.counts[res.verdict] = self.counts.get(res.verdict, 0) + 1
            # the schema phase's bar counts cases; the others' count requirements
            self._update(advance=0 if res.requirement.phase == "schema" else 1)
            if not res.gates_ok or res.status is not Status.PASSED:
                style = _STYLE.get(res.verdict, "white")
                self.progress.console.print(
                    f"  [{style}]{res.verdict:>8}[/] {res.requirement.id} [dim]{escape(clip(res.message, 160))}[/]",
                    highlight=False,
                )
        elif isinstance(event, PhaseFinished) and self.progress is not None and self.task is not None:
            task = self.progress.tasks[-1]
            if task.total is None:  # the pulsing bar ends full, at the number of cases it counted
                self.progress.update(self.task, total=max(task.completed, 1), completed=max(task.completed, 1))
            else:
                self.progress.update(self.task, completed=task.total)
            self.progress.update(self.task, took=event.duration_s)
            self.stage = ""
            self._update()
            self.task = None
        elif isinstance(event, RunFinished):
            self._stop()


def wants_bars(stream: TextIO, environ: Mapping[str, str]) -> bool:
    """Bars on an interactive terminal; plain lines in CI logs, pipes and dumb terminals."""
    if environ.get("CI") or environ.get("TERM") == "dumb":
        return False
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


_PAINT = {"PASS": "1;32", "FAIL": "1;31", "INTERRUPTED": "1;33"}


def wants_colour(stream: TextIO, environ: Mapping[str, str]) -> bool:
    """Colour for the verdict words on an interactive terminal. NO_COLOR (https://no-color.org)
    turns it off and wins; FORCE_COLOR turns it on anywhere (a CI log viewer that renders
    escapes); TERM=dumb cannot show it. Empty values count as unset, as both conventions say."""
    if environ.get("NO_COLOR"):
        return False
    if environ.get("FORCE_COLOR"):
        return True
    if environ.get("TERM") == "dumb":
        return False
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def paint(word: str, colour: bool) -> str:
    """A verdict word (PASS green, FAIL red, INTERRUPTED yellow), coloured when ``colour``."""
    code = _PAINT.get(word)
    return f"\x1b[{code}m{word}\x1b[0m" if colour and code else word
