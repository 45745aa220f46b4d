"""tests/timing.py: a bound is the stated seconds on a quiet machine, scaled by the measured
slowdown on a busy one, and never past what it tells apart."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests import timing

REPO = Path(__file__).resolve().parents[1]


class FakeTime:
    """A thread that gets ``share`` of a core: each millisecond of CPU its work runs costs
    1 / share milliseconds of wall time."""

    def __init__(self, share: float) -> None:
        self.share, self.cpu, self.wall = share, 0.0, 100.0

    def work(self, rounds: int) -> int:
        self.cpu += 0.001
        self.wall += 0.001 / self.share
        return rounds

    def thread_time(self) -> float:
        return self.cpu

    def monotonic(self) -> float:
        return self.wall


def on(monkeypatch: pytest.MonkeyPatch, share: float) -> FakeTime:
    fake = FakeTime(share)
    monkeypatch.setattr(timing, "_work", fake.work)
    monkeypatch.setattr(timing.time, "thread_time", fake.thread_time)
    monkeypatch.setattr(timing.time, "monotonic", fake.monotonic)
    return fake


def test_the_slowdown_is_wall_time_per_cpu_second_never_below_one_nor_past_the_cap(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    on(monkeypatch, 0.25)
    assert timing.slowdown() == pytest.approx(4.0, rel=0.05)
    on(monkeypatch, 1.0)
    assert timing.slowdown() == pytest.approx(1.0)
    on(monkeypatch, 2.0)  # a clock that ran slow: never a bound tighter than the stated one
    assert timing.slowdown() == pytest.approx(1.0)
    on(monkeypatch, 0.001)
    assert timing.slowdown() == timing.MAX_SLOWDOWN
    on(monkeypatch, 0.5)
    assert timing.scaled(10, plus=6) == pytest.approx(6 + 20, rel=0.05)  # the product's timer is not scaled


def test_a_clock_holds_its_bound_at_the_slowdown_of_its_start_or_of_its_check(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = on(monkeypatch, 1.0)
    quiet = timing.Clock()
    fake.wall += 12.0
    assert quiet.within(13) and not quiet.within(11)
    with pytest.raises(AssertionError, match=r"the run took 12\.0 s: over its bound of 0 \+ 11 s"):
        quiet.assert_within(11, "the run")
    assert quiet.within(5, plus=8) and not quiet.within(5, plus=6)

    busy = timing.Clock()  # the load came while it ran: measured again when checked
    fake.share = 0.25
    fake.wall += 12.0
    assert busy.at_start == pytest.approx(1.0) and busy.within(4) and not busy.within(2.5)
    busy.assert_within(4, "the run")

    loaded = timing.Clock()  # 4 at the start: a bound of 40 s
    fake.wall += 35.0
    assert loaded.within(10)
    assert not loaded.within(10, cap=30)  # what the bound tells apart takes 30 s, whatever the load
    with pytest.raises(AssertionError, match=r"at most 30 s"):
        loaded.assert_within(10, "stopping", cap=30)
    stopped = timing.Clock()
    stopped.stop()
    fake.wall += 1000.0
    assert stopped.elapsed < 0.5 and stopped.within(0.5)


@contextmanager
def busy_on(cpu: int, count: int) -> Iterator[None]:
    """``count`` processes spinning on core ``cpu``, stopped by their PIDs."""
    spinners = [
        subprocess.Popen(
            [sys.executable, "-c", f"import os; os.sched_setaffinity(0, {{{cpu}}})\nwhile True: pass"],
            stdout=subprocess.DEVNULL,
        )
        for _ in range(count)
    ]
    try:
        yield
    finally:
        for process in spinners:
            os.kill(process.pid, signal.SIGKILL)
            process.wait()


def measured_on(cpu: int) -> float:
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            f"import os; os.sched_setaffinity(0, {{{cpu}}}); from tests.timing import slowdown;"
            "print(max(slowdown() for _ in range(3)))",
        ],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=60,
        check=True,
    )
    return float(done.stdout)


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="no CPU affinity here")
def test_processes_sharing_the_core_slow_the_measurement_down() -> None:
    """Twelve spinning processes on the core the measurement runs on: it gets a thirteenth of the
    core at most, so it reads a slowdown well above the one without them, whatever else the machine
    runs (with twenty others on that core, 33 / 21)."""
    cpu = max(os.sched_getaffinity(0))
    alone = measured_on(cpu)
    with busy_on(cpu, 12):
        shared = measured_on(cpu)
    assert shared > 1.5 * alone, (alone, shared)


def test_a_deadline_measures_nothing_while_it_lasts_and_stretches_by_the_slowdown_when_it_runs_out(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fake = on(monkeypatch, 0.5)
    deadline = timing.Deadline(10)
    fake.wall += 9.0
    cpu = fake.cpu
    assert not deadline.passed() and fake.cpu == cpu  # no measurement before the 10 s ran out
    fake.wall += 1.5
    assert not deadline.passed() and deadline.length == pytest.approx(20, rel=0.05)  # slowdown 2
    fake.wall += 5.0
    assert not deadline.passed()
    fake.wall += 5.0
    assert deadline.passed() and deadline.waited > 20
    fake.share = 1.0
    quiet = timing.Deadline(10)
    fake.wall += 10.0
    assert quiet.passed()  # at a slowdown of 1, the stated 10 s
