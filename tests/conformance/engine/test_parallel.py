"""``--protocol all --jobs N``: the protocols in worker processes, reported as a sequential run
reports them; stopped by a signal to the parent alone; a worker that dies fails its protocol."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from conformance.engine.parallel import ParallelRuns
from conformance.reporting import ReportFiles
from conformance.run.events import Event, RunFinished, RunStarted
from conformance.run.options import RunOptions
from specs.documents import PROTOCOLS
from tests.timing import Clock, Deadline, scaled

REPO = Path(__file__).resolve().parents[3]
BOUND_S = 180.0
STOP_S = 10.0
"""From SIGTERM to the parent's exit, every report written (a couple of seconds on a quiet machine)."""


def _command(*argv: str) -> list[str]:
    return [sys.executable, "-m", "conformance", *argv]


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(REPO), "PYTHONHASHSEED": "0"}


def _results(folder: Path) -> dict[str, Any]:
    return json.loads((folder / "results.json").read_text(encoding="utf-8"))  # type: ignore[no-any-return]


def _steps(events: Path) -> dict[str, list[tuple[str, ...]]]:
    """Each protocol's events in order, generated cases left out (which cases a stateful stage
    draws follows the process's allocation history, not only the seed: a protocol's run alone in
    a process draws what its worker draws, not what it draws after three others were loaded)."""
    steps: dict[str, list[tuple[str, ...]]] = {}
    protocol = ""
    for line in events.read_text(encoding="utf-8").splitlines():
        event = json.loads(line)
        kind = event["event"]
        if kind == "run_started":
            protocol = event["protocol"]
        if kind == "case_finished":
            continue
        result = event.get("result") or {}
        steps.setdefault(protocol, []).append(
            (
                kind,
                event.get("phase", ""),
                event.get("stage", ""),
                event.get("id", result.get("id", "")),
                result.get("status", ""),
            )
        )
    return steps


def _children(pid: int) -> set[int]:
    found = set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.add(int(stat.parent.name))
    return found


def _alive(pids: set[int]) -> set[int]:
    alive = set()
    for pid in pids:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z":
            alive.add(pid)
    return alive


@pytest.mark.slow  # every protocol's whole suite, twice
def test_a_parallel_run_reports_what_a_sequential_run_reports(tmp_path: Path) -> None:
    runs = {}
    for jobs in ("1", "2"):
        folder = tmp_path / f"jobs-{jobs}"
        done = subprocess.run(
            _command(
                "run", "--protocol", "all", "--jobs", jobs, "--max-examples", "2", "-q",
                "--report-dir", str(folder / "reports"), "--events", str(folder / "events.jsonl"),
            ),
            capture_output=True, text=True, timeout=scaled(BOUND_S), cwd=tmp_path, env=_env(), check=False,
        )  # fmt: skip
        assert "Traceback" not in done.stderr, done.stderr
        runs[jobs] = (done, folder)
    (one, sequential), (two, parallel) = runs["1"], runs["2"]
    assert one.returncode == two.returncode
    for pid in sorted(PROTOCOLS):
        verdicts = [
            {r["id"]: r["status"] for r in _results(folder / "reports" / pid)["requirements"]}
            for folder in (sequential, parallel)
        ]
        assert verdicts[0] and verdicts[0] == verdicts[1], pid
    # the same events in the same order: protocols in turn, each one's steps as a sequential run makes them
    steps = _steps(sequential / "events.jsonl")
    assert list(steps) == sorted(PROTOCOLS)
    assert steps == _steps(parallel / "events.jsonl")
    # the same summary lines, and the combined report beside the protocols' folders

    def lines(done: subprocess.CompletedProcess[str], folder: Path) -> list[str]:
        return [re.sub(r" in [0-9.]+ s;", ";", line).replace(str(folder), "") for line in done.stdout.splitlines()]

    # one line per protocol, then the closing line over all of them
    summary = lines(one, sequential)
    assert summary == lines(two, parallel) and len(summary) == len(PROTOCOLS) + 1
    failed = {
        pid: [r["id"] for r in _results(sequential / "reports" / pid)["requirements"] if r["status"] == "failed"]
        for pid in sorted(PROTOCOLS)
    }
    assert summary[-1].startswith(f"all {len(PROTOCOLS)} protocols: PASS"), (summary[-1], failed)
    for name in ("summary.md", "junit.xml", "report.html"):
        assert (parallel / "reports" / name).is_file()


def test_sigterm_to_the_parent_alone_stops_the_workers_and_writes_every_report(tmp_path: Path) -> None:
    reports = tmp_path / "reports"
    proc = subprocess.Popen(
        _command("run", "--protocol", "all", "--jobs", "2", "--progress", "lines", "--report-dir", str(reports)),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path, env=_env(),
    )  # fmt: skip
    assert proc.stderr is not None
    seen = []
    deadline = Deadline(BOUND_S)
    for line in proc.stderr:  # the first protocol's progress is shown live
        seen.append(line)
        if "schema phase: fuzzing" in line or deadline.passed():
            break
    assert "schema phase: fuzzing" in seen[-1], "".join(seen)
    # the parent's children are the fork server and multiprocessing's resource tracker; the workers
    # are the fork server's children
    helpers, workers = _children(proc.pid), set()
    for _ in range(20):  # --jobs 2: two protocols at once (a moment between one ending and the next)
        workers |= set().union(*(_children(pid) for pid in helpers))
        if len(_alive(workers)) == 2:
            break
        time.sleep(0.1)
    assert len(_alive(workers)) == 2, (helpers, workers)
    proc.send_signal(signal.SIGTERM)  # to the parent alone: it forwards the stop to its workers
    sent = Clock()
    out, err = proc.communicate(timeout=scaled(BOUND_S))
    sent.assert_within(STOP_S, "stopping", cap=BOUND_S / 2)
    assert proc.returncode == 130, out + err
    assert "Traceback" not in err, err
    first = _results(reports / "agent-protocol")
    assert (first["exit_code"], first["stopped"]) == (130, "interrupted")
    schema = [r for r in first["requirements"] if r["phase"] == "schema"]
    assert schema and all(r["message"].startswith("not verified (interrupted)") for r in schema)
    for pid in sorted(PROTOCOLS):  # every protocol reported; nothing unfinished reads passed
        data = _results(reports / pid)
        assert data["requirements"]
        for r in data["requirements"]:
            assert r["status"] == "not verified" or not r["message"].startswith("not verified"), r
        assert data["stopped"] in ("interrupted", None) and (data["exit_code"] == 130) == bool(data["stopped"])
    assert (reports / "junit.xml").is_file()  # the combined report holds all four
    for _ in range(50):  # no worker outlives the run, nor does the fork server
        if not _alive(workers | helpers):
            break
        time.sleep(0.1)
    assert not _alive(workers | helpers)


class _KillFirst:
    """Kills the first protocol's worker as soon as its run has started."""

    def __init__(self) -> None:
        self.runs: ParallelRuns | None = None
        self.events: list[Event] = []
        self.pids: set[int] = set()

    def handle(self, event: Event) -> None:
        self.events.append(event)
        assert self.runs is not None
        self.pids |= {w.process.pid for w in self.runs.workers.values() if w.process.pid}
        if isinstance(event, RunStarted) and event.protocol == "agent-protocol":
            os.kill(self.runs.workers[0].process.pid or 0, signal.SIGKILL)


def test_a_worker_that_dies_fails_its_protocol_and_the_others_run_on(tmp_path: Path) -> None:
    plans = [
        RunOptions(protocol="agent-protocol", max_examples=5, phases=("schema",)),
        RunOptions(protocol="neuro-san", phases=("scenario",), only=("NS-CONN-001", "NS-FUNC-001")),
    ]
    killer, reports = _KillFirst(), ReportFiles(lambda pid: tmp_path / pid)
    runs = ParallelRuns(plans, [killer, reports], reports, 2)
    killer.runs = runs
    lost, other = list(runs.results())
    assert (lost.stopped, lost.exit_code) == ("crashed", 1)
    assert lost.results and all(r.status.value == "error" for r in lost.results)
    assert all(
        "worker process running agent-protocol ended without its result (killed by SIGKILL)" in r.message
        for r in lost.results
    )
    assert (other.protocol, other.exit_code) == ("neuro-san", 0)
    # handlers saw each protocol start and finish once, in turn, and both reports are written
    ends = [
        (type(e).__name__, e.protocol if isinstance(e, RunStarted) else e.result.protocol)
        for e in killer.events
        if isinstance(e, RunStarted | RunFinished)
    ]
    assert ends == [
        ("RunStarted", "agent-protocol"),
        ("RunFinished", "agent-protocol"),
        ("RunStarted", "neuro-san"),
        ("RunFinished", "neuro-san"),
    ]
    assert (
        _results(tmp_path / "agent-protocol")["exit_code"] == 1 and (tmp_path / "neuro-san" / "results.json").is_file()
    )
    assert killer.pids and not _alive(killer.pids)
