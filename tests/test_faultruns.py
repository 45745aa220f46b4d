"""The session's shared fault runs (tests/faultruns.py): each made once, whoever asks first; one
asked for while another process makes it is waited for, never made twice."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from tests import faultruns
from tests.timing import Clock, Deadline


class _Slow:
    """A run that takes until the test lets it end, counting how often it was made."""

    def __init__(self) -> None:
        self.made = 0
        self.started = threading.Event()
        self.go = threading.Event()

    def __call__(self, key: str) -> Any:
        self.made += 1
        self.started.set()
        assert self.go.wait(10)
        return type("R", (), {"to_dict": lambda self: {"key": key}})(), None


def test_a_run_is_made_once_and_a_second_asker_waits_for_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    slow = _Slow()
    monkeypatch.setattr(faultruns, "_make", slow)
    first = threading.Thread(target=faultruns.make, args=(str(tmp_path), "x-fault", False))
    first.start()
    assert slow.started.wait(10)
    # one that makes runs ahead passes over it; one that needs it now waits for it
    assert faultruns.make(str(tmp_path), "x-fault", False) is False
    waiter: list[bool] = []
    second = threading.Thread(target=lambda: waiter.append(faultruns.make(str(tmp_path), "x-fault", True)))
    second.start()
    second.join(0.2)
    assert second.is_alive() and not (tmp_path / "x-fault.json").exists()
    slow.go.set()
    first.join(10)
    second.join(10)
    assert waiter == [True] and slow.made == 1
    assert json.loads((tmp_path / "x-fault.json").read_text())["report"] == {"key": "x-fault"}
    assert faultruns.make(str(tmp_path), "x-fault", False) is True and slow.made == 1


def test_the_runs_a_session_names_are_read_from_its_tests_marks() -> None:
    class Item:
        def __init__(self, *marks: pytest.MarkDecorator) -> None:
            self.marks = [m.mark for m in marks]

        def iter_markers(self, name: str) -> list[pytest.Mark]:
            return [m for m in self.marks if m.name == name]

    items = [Item(pytest.mark.fault_runs("a", "b")), Item(pytest.mark.slow), Item(pytest.mark.fault_runs("c"))]
    assert faultruns.wanted(items) == ["a", "b", "c"]  # type: ignore[arg-type]


def _stubborn(root: str, keys: list[str]) -> None:
    """Runs that stop only when they are done, as a run does on SIGTERM."""
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    (Path(root) / "ready").touch()
    time.sleep(60)


def test_closing_ends_the_runs_made_ahead_at_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The session's end does not wait for a run made ahead that no test reads any more."""
    # what the processes made ahead run: a fresh interpreter, so the stub is named by its module
    stub = (
        "import json, sys; from tests.test_faultruns import _stubborn; _stubborn(sys.argv[1], json.loads(sys.argv[2]))"
    )
    monkeypatch.setattr(faultruns, "AHEAD", stub)
    runs = faultruns.FaultRuns(tmp_path, ["x-fault"], 1)
    deadline = Deadline(30)
    while not (tmp_path / "ready").exists() and not deadline.passed():
        time.sleep(0.05)
    assert (tmp_path / "ready").exists()
    clock = Clock()
    runs.close()
    clock.assert_within(5, "closing", cap=30)  # 60 s, the run's own end, without the kill


def test_a_process_making_runs_ahead_ends_when_the_test_process_that_started_it_is_gone(tmp_path: Path) -> None:
    """A session cut short (a worker killed, Ctrl-C before ``close``) leaves no process making runs
    for no one: the one making them ahead watches the process that started it."""
    # a stand-in for the test process: starts one making runs ahead (each run endless), says its
    # pid, and exits at once
    ahead = (
        "import sys, time; import tests.faultruns as f; f.make = lambda *a: time.sleep(600); "
        "f.ahead(sys.argv[1], ['never-ends'], int(sys.argv[2]))"
    )
    parent = (
        "import os, subprocess, sys; quiet = subprocess.DEVNULL; "
        f"p = subprocess.Popen([sys.executable, '-c', {ahead!r}, sys.argv[1], str(os.getpid())], stdout=quiet, "
        "stderr=quiet); print(p.pid, flush=True)"
    )
    out = subprocess.run(
        [sys.executable, "-c", parent, str(tmp_path)], capture_output=True, text=True, timeout=60, cwd=faultruns.REPO
    )
    pid = int(out.stdout)
    deadline = Deadline(30)
    while not deadline.passed():
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.1)
    else:
        os.kill(pid, signal.SIGKILL)
        pytest.fail("the process making runs ahead outlived the process that started it")


def test_what_the_runs_print_goes_to_the_folder_not_to_the_tests_output(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    """The processes making runs start before pytest captures a test's output (the session's
    collection end): the mock's log of each crash a fault makes went to the terminal."""
    stub = "import sys, pathlib; print('said ahead'); print('warned ahead', file=sys.stderr, flush=True); "
    stub += "pathlib.Path(sys.argv[1], 'ready').touch()"
    monkeypatch.setattr(faultruns, "AHEAD", stub)
    runs = faultruns.FaultRuns(tmp_path, ["x-fault"], 1)
    try:
        deadline = Deadline(30)
        while not (tmp_path / "ready").exists() and not deadline.passed():
            time.sleep(0.05)
        runs._now.apply(os.write, (2, b"warned now\n"))  # what a run made at once prints
    finally:
        runs.close()
    assert capfd.readouterr() == ("", "")
    logs = "".join(log.read_text() for log in sorted(tmp_path.glob("*.log")))
    assert "said ahead" in logs and "warned ahead" in logs and "warned now" in logs


@pytest.mark.parametrize(("option", "begun"), [("--collect-only", False), ("--setup-plan", True)])
def test_a_session_that_only_collects_begins_no_runs(option: str, begun: bool, tmp_path: Path) -> None:
    """``pytest --collect-only`` (tests/test_scheduling.py runs one over the project) makes no run
    ahead; a session with the same items that goes on (``--setup-plan``, the control) begins them."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_XDIST")}
    argv = [sys.executable, "-m", "pytest", "-q", "-n", "0", "-p", "no:cacheprovider", option]
    argv += ["--basetemp", str(tmp_path / "base"), "tests/conformance/evidence/test_diff.py"]
    done = subprocess.run(argv, cwd=faultruns.REPO, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert (tmp_path / "base" / "fault-runs").is_dir() is begun
