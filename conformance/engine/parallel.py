"""``--protocol all --jobs N``: the protocols' runs in worker processes, their events in protocol order.

A protocol's run is one process's worth of CPU (its embedded mock and the client share one
interpreter lock), so several protocols go faster only in several processes. Each worker is forked
from a fork server that imported the suite and the mock once (``PRELOAD``: a fresh interpreter per
worker would import them again, about a second of CPU each), runs ``runner.run`` for one protocol
and relays every event through a pipe.
The parent hands the events to its handlers (console, ``--events``, report files) in protocol
order: live for the first protocol not yet handed on whole, buffered for the later ones and
flushed when their turn comes. So the handlers see the sequence a sequential run makes, and the
verdicts are the same: a worker inherits the pinned PYTHONHASHSEED (``launch.entry``).

Stopping: workers leave the terminal's process group as they start, so only the parent signals
them, and each at most once (a second signal would be a second Ctrl-C to its watchdog). A SIGINT or
SIGTERM the parent gets is forwarded by PID to every running worker, whose watchdog turns it into
"not verified (interrupted)"; protocols not started are reported not run. A worker that has not
stopped within ``STOP_GRACE_S`` is killed; a second signal ends everything at once. A worker that
ends without its result (killed, crashed) makes its protocol an error that fails the run.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal
import sys
import threading
import time
import traceback
from collections.abc import Generator, Iterator, Sequence
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from multiprocessing.process import BaseProcess
from types import FrameType
from typing import Any

from conformance.engine.runner import not_run, run, salvage
from conformance.run.events import Emitter, Event, EventHandler, RequirementFinished, RunFinished, RunStarted
from conformance.run.options import RunOptions
from conformance.run.watchdog import INTERRUPTED
from conformance.verdicts.results import CRASHED, RequirementResult, RunResult, Status

STOP_GRACE_S = 5.0
"""How long a worker has to report after the stop is forwarded to it (its watchdog takes ~1 s)."""
_TICK_S = 0.2
PRELOAD = ("conformance.engine.runner", "conformance.phases.schema.engine", "mockserver.app")
"""What the fork server imports once for every worker: the run, schemathesis and the embedded mock.
It is single-threaded and has run nothing, so each forked worker starts as fresh as a new process,
with the PYTHONHASHSEED pinned when the server started (``hash_seed_pinned``)."""
_SIGNALS = {signal.SIGINT, signal.SIGTERM}


@contextlib.contextmanager
def hash_seed_pinned() -> Iterator[None]:
    """PYTHONHASHSEED set while worker processes are started (they inherit the environment): the
    one ``conformance`` pins itself (``launch.entry``) unless one is set, so a worker draws the
    cases a run in this process draws."""
    saved = os.environ.get("PYTHONHASHSEED")
    os.environ.setdefault("PYTHONHASHSEED", "0")
    try:
        yield
    finally:
        if saved is None:
            del os.environ["PYTHONHASHSEED"]


def usable_cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def workers_for(jobs: int, protocols: int) -> int:
    """``--jobs``: 0 is one worker per usable core; never more workers than protocols."""
    return max(1, min(jobs or usable_cores(), protocols))


# the worker process ---------------------------------------------------------------------------


class _NotStarted(BaseException):
    """A stop signal reached the worker before its run began: it ends without one."""


class _Relay:
    """The worker's one handler: every event to the parent."""

    def __init__(self, conn: Connection) -> None:
        self.conn = conn
        self.started = False

    def handle(self, event: Event) -> None:
        self.started = self.started or isinstance(event, RunStarted)
        try:
            self.conn.send(event)
        except OSError:  # the parent is gone: nobody will read the rest, and no worker outlives it
            os._exit(1)


def _work(options: RunOptions, conn: Connection) -> None:
    """A worker's main: one protocol's run, every event relayed. A stop that reaches it before
    its run began ends it without one (the parent reports that protocol not run)."""
    relay = _Relay(conn)

    def before_run(signum: int, frame: FrameType | None) -> None:
        # before the run's watchdog takes the signals over, a stop ends the worker at once; after
        # it hands them back (the run is over), the only signal the parent sends is already spent
        if not relay.started:
            raise _NotStarted

    for sig in _SIGNALS:
        signal.signal(sig, before_run)
    os.setpgid(0, 0)  # out of the terminal's process group: a Ctrl-C reaches it only through the parent
    signal.pthread_sigmask(signal.SIG_UNBLOCK, _SIGNALS)
    code = 0
    try:
        run(options, [relay])
    except _NotStarted:
        pass
    except BaseException:  # a suite bug: shown as a sequential run shows it; the parent reports the loss
        traceback.print_exc()
        code = 1
    finally:
        conn.close()
        sys.stdout.flush()
        sys.stderr.flush()
        # everything is sent: skip the interpreter's teardown (a second or so of the next worker's
        # time on a busy machine), and wait for no thread the run may have left behind
        os._exit(code)


# the parent -----------------------------------------------------------------------------------


@dataclass
class _Worker:
    options: RunOptions
    process: BaseProcess
    conn: Connection
    pending: list[Event] = field(default_factory=list)
    """Received, not yet handed on (a later protocol's, waiting for its turn)."""
    decided: list[RequirementResult] = field(default_factory=list)
    started: bool = False
    """Its ``RunStarted`` was received."""
    result: RunResult | None = None
    signalled: bool = False
    ended: bool = False
    """Its pipe closed: the process has exited or is exiting (never signalled after that)."""


class ParallelRuns:
    """The protocols of ``plans`` run by ``jobs`` worker processes; ``results()`` yields each
    protocol's result in plan order, after ``handlers`` saw all of its events. ``reports`` (one of
    the handlers) alone hears of a protocol an interrupt kept from starting, as a sequential run
    does it."""

    def __init__(
        self, plans: Sequence[RunOptions], handlers: Sequence[EventHandler], reports: EventHandler, jobs: int
    ) -> None:
        self.plans = list(plans)
        self.emit = Emitter(handlers)
        self.handlers = list(handlers)
        self.reports = reports
        self.jobs = jobs
        self.workers: dict[int, _Worker] = {}
        self.stop_signal: signal.Signals | None = None
        self.stopped_at = 0.0
        self.stopped_during = ""
        """The first protocol (in plan order) running when the stop came."""
        self.turn = 0
        """The protocol whose events are handed on live."""
        self._context = multiprocessing.get_context("forkserver")
        self._context.set_forkserver_preload(list(PRELOAD))

    def results(self) -> Generator[RunResult, None, None]:
        main = threading.current_thread() is threading.main_thread()
        saved = {sig: signal.signal(sig, self._on_signal) for sig in _SIGNALS} if main else {}
        try:
            for index, options in enumerate(self.plans):
                self.turn = index
                yield self._result(index, options)
        finally:
            for sig, handler in saved.items():
                signal.signal(sig, handler)
            self._end_all()
            _stop_fork_server()

    # one protocol's turn -------------------------------------------------------------------
    def _result(self, index: int, options: RunOptions) -> RunResult:
        while True:
            self._start_more()
            worker = self.workers.get(index)
            if worker is None:  # only a stop keeps a protocol from starting in its turn
                return not_run(
                    options, [self.reports], INTERRUPTED, f"the run was interrupted during {self.stopped_during}"
                )
            self._hand_on(worker)
            if worker.ended:
                return self._finished(worker)
            self._receive(live=index)

    def _finished(self, worker: _Worker) -> RunResult:
        if worker.result is not None:
            return worker.result
        options, code = worker.options, worker.process.exitcode
        if self.stop_signal is not None:  # stopped before its run began, or killed past the grace
            name = self.stop_signal.name
            if not worker.started:
                return not_run(options, [self.reports], INTERRUPTED, f"interrupted by {name} before its run began")
            reason = f"interrupted by {name} before this requirement was decided"
            return salvage(options, self.handlers, worker.decided, INTERRUPTED, reason, announced=True)
        how = f"killed by {signal.Signals(-code).name}" if code is not None and code < 0 else f"exit code {code}"
        reason = f"the worker process running {options.protocol} ended without its result ({how})"
        return salvage(
            options, self.handlers, worker.decided, CRASHED, reason, announced=worker.started, status=Status.ERROR
        )

    # workers -------------------------------------------------------------------------------
    def _start_more(self) -> None:
        while self.stop_signal is None and len(self.workers) < len(self.plans) and self._running() < self.jobs:
            index = len(self.workers)
            self.workers[index] = worker = self._start(self.plans[index])
            if self.stop_signal is not None:  # the stop came while it was starting
                self._signal(worker)

    def _running(self) -> int:
        return sum(not w.ended for w in self.workers.values())

    def _start(self, options: RunOptions) -> _Worker:
        reader, writer = self._context.Pipe(duplex=False)
        process = self._context.Process(
            target=_work, args=(options, writer), name=f"conformance-{options.protocol}", daemon=True
        )
        # blocked in this thread while the fork server starts (the first worker starts it), so the
        # server and every worker forked from it start with them blocked: a signal then waits for
        # the worker's handler instead of killing it half-started; here they wait a moment
        blocked = signal.pthread_sigmask(signal.SIG_BLOCK, _SIGNALS)
        try:
            with hash_seed_pinned():
                process.start()
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
            writer.close()  # the worker's end: once it is gone too, the pipe reads EOF
        return _Worker(options, process, reader)

    def _signal(self, worker: _Worker) -> None:
        if worker.signalled or worker.ended or self.stop_signal is None:
            return
        worker.signalled = True
        with contextlib.suppress(ProcessLookupError):
            os.kill(worker.process.pid or 0, self.stop_signal)

    def _on_signal(self, signum: int, frame: FrameType | None) -> None:
        if self.stop_signal is not None:  # the second: end now (the workers are killed on the way out)
            raise KeyboardInterrupt
        self.stop_signal, self.stopped_at = signal.Signals(signum), time.monotonic()
        running = [w for _, w in sorted(self.workers.items()) if not w.ended]
        self.stopped_during = (running[0].options if running else self.plans[self.turn]).protocol
        for worker in running:
            self._signal(worker)

    def _receive(self, live: int) -> None:
        """Whatever the running workers sent within a tick: handed on now for protocol ``live``,
        kept for the others; a closed pipe ends its worker."""
        running = {w.conn: (i, w) for i, w in self.workers.items() if not w.ended}
        if self.stop_signal is not None and time.monotonic() - self.stopped_at > STOP_GRACE_S:
            for _, worker in running.values():
                worker.process.kill()
        for ready in wait(list(running), _TICK_S):
            index, worker = running[ready]  # type: ignore[index]
            try:
                while worker.conn.poll():
                    self._take(worker, worker.conn.recv(), index == live)
            except (EOFError, OSError):
                self._ended(worker)

    def _take(self, worker: _Worker, event: Any, live: bool) -> None:
        if isinstance(event, RunStarted):
            worker.started = True
        elif isinstance(event, RequirementFinished):
            worker.decided.append(event.result)
        elif isinstance(event, RunFinished):
            worker.result = event.result
        if live:
            self.emit(event)
        else:
            worker.pending.append(event)

    def _hand_on(self, worker: _Worker) -> None:
        pending, worker.pending = worker.pending, []
        for event in pending:
            self.emit(event)

    def _ended(self, worker: _Worker) -> None:
        """Its pipe closed. With its result it is exiting: the next worker starts now and this one
        is reaped at the end. Without, how it ended (its exit code) is what the report can say."""
        worker.ended = True
        worker.conn.close()
        if worker.result is None:
            worker.process.join(STOP_GRACE_S)
            if worker.process.is_alive():  # closed its pipe but hangs on its way out
                worker.process.kill()
                worker.process.join()

    def _end_all(self) -> None:
        """No worker outlives the run: those still running (the run was abandoned) are killed."""
        for worker in self.workers.values():
            if not worker.ended:
                worker.ended = True
                worker.process.kill()
                worker.conn.close()
            worker.process.join()
            worker.process.close()


def _stop_fork_server() -> None:
    """The fork server ends with the run, reaped by this process, as the workers are: nothing of
    the run outlives it, and its CPU time (its workers' included) counts to this process's children
    (``getrusage``), as a sequential run's does. ``_stop`` is the standard library's own way to
    stop it (its tests use it; there is no public one), so it is looked up, not assumed."""
    from multiprocessing import forkserver

    stop = getattr(getattr(forkserver, "_forkserver", None), "_stop", None)
    if callable(stop):
        stop()
