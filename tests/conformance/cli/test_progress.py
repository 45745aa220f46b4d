"""The console while a run works: bars per phase with counts and colour on a terminal, plain lines
elsewhere, and the choice between them."""

from __future__ import annotations

import io
import os
import pty
import re
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from rich.console import Console

from conformance.cli.commands import main
from conformance.cli.progress import ProgressBars, ProgressLines, wants_bars, wants_colour
from conformance.engine.runner import run
from conformance.run.events import Event, PhaseFinished, PhaseStarted, Recorder, RunFinished, RunStarted
from conformance.run.options import RunOptions
from conformance.selfcheck.catalogue import fault_options
from conformance.verdicts.requirements import Level
from conformance.verdicts.results import RunResult
from mockserver import EmbeddedServer, MockConfig, catalogue
from specs.documents import load

REPO = Path(__file__).resolve().parents[3]
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def recorded(options: RunOptions) -> list[Event]:
    recorder = Recorder()
    run(options, [recorder])
    return recorder.events


def replayed(events: list[Event]) -> str:
    """What the bars draw for these events on a 120-column colour terminal."""
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, color_system="standard", width=120)
    with ProgressBars(console) as bars:
        for event in events:
            bars.handle(event)
    return out.getvalue()


def final_frame(drawn: str) -> list[str]:
    """The lines left on screen: the last redraw of each bar, plus the lines printed above them."""
    plain = ANSI.sub("", drawn).replace("\r", "\n")
    return [line.rstrip() for line in plain.split("\n") if line.strip()]


def test_each_phase_gets_a_bar_with_its_counts() -> None:
    events = recorded(
        RunOptions(protocol="agent-protocol", only=("AP-TASK-001", "AP-TASK-002", "AP-SCHEMA-001"), max_examples=3)
    )
    drawn = replayed(events)
    lines = final_frame(drawn)
    for title in ("agent-protocol preflight", "agent-protocol property-based", "agent-protocol scenarios"):
        assert any(line.startswith(title) for line in lines), (title, lines)
    cases = sum(type(e).__name__ == "CaseFinished" for e in events)
    assert cases > 0
    assert any(f"{cases}/{cases}" in line and "1 passed" in line for line in lines if "property-based" in line)
    assert any("2/2" in line and "2 passed" in line for line in lines if "scenarios" in line)
    assert "\x1b[32m" in drawn  # green for what passed


def test_a_failure_is_printed_above_the_bars_in_colour_as_it_is_decided() -> None:
    fault = catalogue()["ap-task-created-201"]
    with EmbeddedServer(MockConfig(protocols=(fault.protocol,), faults=(fault.name,))) as server:
        options = fault_options(fault, server.url + load(fault.protocol).info.base_path, exact=False)
        events = recorded(replace(options, only=("AP-TASK-001", "AP-TASK-002"), phases=("scenario",)))
    drawn = replayed(events)
    lines = final_frame(drawn)
    failed = [line for line in lines if line.lstrip().startswith("failed AP-TASK-001")]
    assert failed and "201" in failed[0], lines
    assert any("1 failed" in line and "1 passed" in line for line in lines if "scenarios" in line)
    assert "\x1b[1;31m" in drawn  # bold red


def test_the_live_display_stops_when_the_run_raises() -> None:
    console = Console(file=io.StringIO(), force_terminal=True)
    events = recorded(RunOptions(protocol="agent-protocol", only=("AP-TASK-001",), phases=("scenario",)))
    with pytest.raises(RuntimeError), ProgressBars(console) as bars:
        bars.handle(events[0])
        assert bars.progress is not None and bars.progress.live.is_started
        raise RuntimeError("the run broke")
    assert bars.progress is None


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize(
    ("stream", "environ", "bars"),
    [
        (Tty(), {}, True),
        (Tty(), {"CI": "true"}, False),  # CI logs get plain lines even when a pseudo-terminal is attached
        (Tty(), {"TERM": "dumb"}, False),
        (io.StringIO(), {}, False),  # a pipe or a file
    ],
)
def test_bars_only_on_an_interactive_terminal(stream: io.StringIO, environ: dict[str, str], bars: bool) -> None:
    assert wants_bars(stream, environ) is bars


def cli_on_a_terminal(tmp_path: Path, *args: str, stdout: bool = False, environ: dict[str, str] | None = None) -> str:
    """Run the CLI with its stderr (and with ``stdout``, its stdout too) on a pseudo-terminal and
    return what the terminal received."""
    leader, follower = pty.openpty()
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "NO_COLOR", "FORCE_COLOR", "TERM")}
    env |= {"TERM": "xterm-256color", "PYTHONPATH": str(REPO), **(environ or {})}
    proc = subprocess.Popen(
        [sys.executable, "-m", "conformance", "run", "--report-dir", str(tmp_path), *args],
        stdout=follower if stdout else subprocess.DEVNULL,
        stderr=follower,
        env=env,
    )
    os.close(follower)
    received = bytearray()
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the child closed its side
            break
        if not chunk:
            break
        received += chunk
    assert proc.wait(timeout=120) == 0
    os.close(leader)
    return received.decode("utf-8", "replace")


def test_the_cli_draws_bars_on_a_terminal_and_lines_when_asked(tmp_path: Path) -> None:
    common = ("--protocol", "agent-protocol", "--only", "AP-TASK-001", "--phase", "scenario")
    drawn = cli_on_a_terminal(tmp_path / "bars", *common)
    assert "\x1b[" in drawn and "agent-protocol scenarios" in ANSI.sub("", drawn)
    assert "scenarios phase done" not in drawn
    plain = cli_on_a_terminal(tmp_path / "lines", *common, "--progress", "lines")
    assert "agent-protocol: scenarios phase done in " in plain and "\x1b[32m" not in plain


def test_a_line_written_above_the_bars_is_never_wrapped() -> None:
    """-v's curl lines go above the bars: cut at the console's 80 columns they could not be pasted."""
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, color_system="standard", width=80)
    curl = "curl -sS -i -X POST -H 'Content-Type: application/json' --data-binary '{\"input\": \"" + "x" * 200 + "\"}'"
    with ProgressBars(console) as bars:
        bars.handle(RunStarted("agent-protocol", "t", 0, "may", ()))
        bars.write(curl + " [not markup]")
    assert curl + " [not markup]" in ANSI.sub("", out.getvalue()).replace("\r", "\n").split("\n")


def test_a_phase_replayed_later_shows_the_time_it_took_not_the_time_it_took_to_draw() -> None:
    """A later protocol of a parallel run is drawn from relayed events at once: its bars show each
    phase's own duration."""
    events: list[Event] = [
        RunStarted("neuro-san", "t", 0, "may", ("NS-FUNC-001",)),
        PhaseStarted("scenario", ("NS-FUNC-001",)),
        PhaseFinished("scenario", 75.4),
        RunFinished(RunResult("neuro-san", "t", "1", 0, Level.MAY, "")),
    ]
    lines = final_frame(replayed(events))
    assert any("neuro-san scenarios" in line and "0:01:15" in line for line in lines), lines


def test_lines_list_what_did_not_pass_as_it_is_decided_and_one_line_per_phase() -> None:
    fault = catalogue()["ap-task-created-201"]
    with EmbeddedServer(MockConfig(protocols=(fault.protocol,), faults=(fault.name,))) as server:
        options = fault_options(fault, server.url + load(fault.protocol).info.base_path, exact=False)
        events = recorded(replace(options, only=("AP-TASK-001", "AP-TASK-002"), phases=("scenario",)))
    lines: list[str] = []
    handler = ProgressLines(lines.append)
    for event in events:
        handler.handle(event)
    assert len(lines) == 3, lines
    assert lines[0] == "agent-protocol: scenarios phase (2 requirements)"
    assert lines[1].startswith("[1/2] AP-TASK-001 failed: expected HTTP 200, got 201")
    assert re.fullmatch(r"agent-protocol: scenarios phase done in \d+\.\d s: 1 failed, 1 passed", lines[2])


@pytest.mark.parametrize(
    ("stream", "environ", "colour"),
    [
        (Tty(), {}, True),
        (io.StringIO(), {}, False),  # a pipe, a file, a CI log
        (Tty(), {"NO_COLOR": "1"}, False),
        (Tty(), {"NO_COLOR": ""}, True),  # empty counts as unset (no-color.org)
        (io.StringIO(), {"FORCE_COLOR": "1"}, True),
        (Tty(), {"NO_COLOR": "1", "FORCE_COLOR": "1"}, False),  # NO_COLOR wins
        (Tty(), {"TERM": "dumb"}, False),
        (Tty(), {"CI": "true"}, True),  # a CI job's pseudo-terminal shows colour; only bars need a live screen
    ],
)
def test_verdict_colour_only_on_a_terminal_honouring_no_color_and_force_color(
    stream: io.StringIO, environ: dict[str, str], colour: bool
) -> None:
    assert wants_colour(stream, environ) is colour


def test_the_final_pass_is_green_on_a_terminal(tmp_path: Path) -> None:
    common = ("--protocol", "agent-protocol", "--only", "AP-TASK-001", "--phase", "scenario", "--progress", "lines")
    drawn = cli_on_a_terminal(tmp_path / "tty", *common, stdout=True)
    assert "agent-protocol: \x1b[1;32mPASS\x1b[0m - MUST 1 passed" in drawn
    plain = cli_on_a_terminal(tmp_path / "no-color", *common, stdout=True, environ={"NO_COLOR": "1"})
    assert "agent-protocol: PASS - MUST 1 passed" in plain and "\x1b[" not in plain


def test_the_final_fail_is_red_when_colour_is_forced_and_plain_otherwise(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without a terminal (capsys) nothing on stdout or stderr carries an escape code; FORCE_COLOR
    colours the verdict as a terminal would get it."""
    for name in ("NO_COLOR", "FORCE_COLOR", "CI", "TERM"):
        monkeypatch.delenv(name, raising=False)
    fault = catalogue()["ap-task-created-201"]
    with EmbeddedServer(MockConfig(protocols=(fault.protocol,), faults=(fault.name,))) as server:
        url = server.url + load(fault.protocol).info.base_path
        argv = [
            "run",
            "--protocol",
            "agent-protocol",
            "--base-url",
            url,
            "--only",
            "AP-TASK-001",
            "--phase",
            "scenario",
        ]
        assert main([*argv, "--report-dir", str(tmp_path / "plain")]) == 1
        out, err = capsys.readouterr()
        assert "agent-protocol: FAIL - MUST 0 passed, 1 failed" in out
        assert "[1/1] AP-TASK-001 failed: expected HTTP 200, got 201" in err  # --progress auto: lines
        assert "\x1b" not in out + err
        monkeypatch.setenv("FORCE_COLOR", "1")
        assert main([*argv, "--report-dir", str(tmp_path / "forced")]) == 1
        out, err = capsys.readouterr()
        assert "agent-protocol: \x1b[1;31mFAIL\x1b[0m - MUST 0 passed, 1 failed" in out
        assert "\x1b" not in err  # the progress lines stay plain: only the verdict is painted
