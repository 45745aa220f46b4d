"""The watchdog: how a stop reaches the main thread, once, and what tells a cut from the target's doing."""

from __future__ import annotations

import signal
import threading
import time

import pytest

from conformance.run.watchdog import BUDGET, STOPPED_ANSWERING, RunStopped, Watchdog
from tests.timing import Deadline


def test_a_late_wake_up_after_the_main_thread_saw_the_stop_does_not_raise_again() -> None:
    """The watchdog's thread stops the run, then wakes the main thread; if the main thread saw the
    stop first (``check`` between two checks), the wake-up must not raise again while the run is
    being closed (it escaped the runner: a traceback instead of "not verified (budget)")."""
    with Watchdog() as watchdog:
        watchdog.stop(BUDGET, "the run's time budget of 6 s ran out")
        with pytest.raises(RunStopped, match="budget of 6 s"):
            watchdog.check()
        signal.pthread_kill(threading.get_ident(), signal.SIGUSR1)  # the watchdog thread's wake-up, late
        time.sleep(0.05)  # the handler runs here: it must not raise


def test_the_guard_stops_a_run_through_the_watchdog() -> None:
    with Watchdog() as watchdog:
        assert not watchdog.cutting
        watchdog.stop(STOPPED_ANSWERING, "3 consecutive exchanges on 3 different routes got no answer")
        assert watchdog.cutting  # what the exchanges in flight fail with now is the run's doing
        with pytest.raises(RunStopped) as stopped:
            watchdog.check()
    assert stopped.value.kind == STOPPED_ANSWERING


def test_a_section_cut_by_its_own_budget_is_cutting_while_the_run_goes_on() -> None:
    stops: list[bool] = []
    with Watchdog() as watchdog, watchdog.graceful(lambda: stops.append(True), 0.05, "phase's share") as section:
        deadline = Deadline(5)
        while not section.cut and not deadline.passed():
            time.sleep(0.02)
        assert section.cut == "the phase's share of 0.05 s ran out" and stops
        assert watchdog.cutting and watchdog.stopped is None
