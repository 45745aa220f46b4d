"""The one place a run is stopped: interrupts (SIGINT/SIGTERM), the time budget, and exchanges
that outlive their bound.

A ``Watchdog`` is active for a whole run. Stopping it (a signal, a deadline it watches from its
own thread, or the run's stall guard finding the target stopped answering, ``stop``) does three
things at once: it records why (``interrupted``, ``budget``, ``STOPPED_ANSWERING``), it ends every
exchange in flight by shutting down the sockets the property-based phase's worker threads read
from, and it makes the main thread raise ``RunStopped`` (a signal handler raises it, which also
breaks a blocking read there). A phase that can wind down by itself (schemathesis, told through
its stop event) marks itself ``graceful`` and is left to finish instead of being raised into.

The runner turns ``RunStopped`` into "not verified (interrupted)", "not verified (budget)" or
"not verified (the target stopped answering)" for every requirement not decided yet; nothing
unfinished is ever reported passed. A stop that is not a signal reaches the main thread at its next
``check()`` (between checks and phases), or through what it stopped (the guard refuses every
further request).
"""

from __future__ import annotations

import contextlib
import signal
import socket
import threading
import time
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any

from ..check.guard import STOPPED_ANSWERING as STOPPED_ANSWERING  # the third kind: the guard stops a run

INTERRUPTED, BUDGET = "interrupted", "budget"
_WAKE = signal.SIGUSR1
"""Sent to the main thread by the watchdog's thread, so a blocking read there ends too."""
_TICK_S = 0.1


class RunStopped(BaseException):
    """The run was stopped (a BaseException: no check's ``except Exception`` may swallow it)."""

    def __init__(self, kind: str, reason: str) -> None:
        super().__init__(reason)
        self.kind = kind
        self.reason = reason


class Late:
    def __init__(self, deadline: float) -> None:
        self.deadline = deadline
        self.cut = False


class Section:
    """A graceful block (see ``Watchdog.graceful``); ``cut`` says why its own budget ended it."""

    def __init__(self, stop: Callable[[], None], deadline: float | None, reason: str) -> None:
        self.stop = stop
        self.deadline = deadline
        self.reason = reason
        self.cut = ""


class Watchdog:
    def __init__(self) -> None:
        self.stopped: RunStopped | None = None
        self._deadlines: list[tuple[float, RunStopped]] = []
        self._exchanges: dict[int, Late] = {}
        """Thread id -> when that thread's exchange in flight must have ended."""
        self._sockets: weakref.WeakSet[socket.socket] = weakref.WeakSet()
        """Sockets the property-based phase opened. A pooled connection may be reused by another
        thread than the one that opened it, so a late exchange shuts them all (one worker runs)."""
        self._sections: list[Section] = []
        self._lock = threading.RLock()  # re-entered when a signal handler runs in a thread holding it
        self._done = threading.Event()
        self._thread: threading.Thread | None = None
        self._main = threading.get_ident() if threading.current_thread() is threading.main_thread() else None
        self._saved: dict[int, Any] = {}
        self._delivered = False
        """Whether the main thread was raised into already: the wake-up signal may arrive after it
        saw the stop by itself (``check``), and must not raise a second time while the run closes."""

    # lifecycle ---------------------------------------------------------------------------
    def __enter__(self) -> Watchdog:
        if self._main is not None:  # signal handlers can only be installed from the main thread
            for sig in (signal.SIGINT, signal.SIGTERM, _WAKE):
                self._saved[sig] = signal.signal(sig, self._on_signal)
        self._thread = threading.Thread(target=self._watch, name="conformance-watchdog", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._done.set()
        if self._thread is not None:  # joined first: only it sends the wake-up signal
            self._thread.join()
        for sig, handler in self._saved.items():
            signal.signal(sig, handler)

    # what the run asks of it -------------------------------------------------------------
    @contextmanager
    def deadline(self, seconds: float, what: str, since: float | None = None) -> Iterator[None]:
        """Stop with ``budget`` if the block is still running ``seconds`` after ``since`` (a
        ``time.monotonic()`` value; by default now)."""
        start = time.monotonic() if since is None else since
        entry = (start + seconds, RunStopped(BUDGET, f"the {what} of {seconds:g} s ran out"))
        with self._lock:
            self._deadlines.append(entry)
        try:
            yield
        finally:
            with self._lock:
                if entry in self._deadlines:
                    self._deadlines.remove(entry)

    @contextmanager
    def graceful(self, stop: Callable[[], None], seconds: float | None = None, what: str = "") -> Iterator[Section]:
        """A block that winds down by itself once ``stop`` is called, so it is not raised into.
        With ``seconds`` it has a budget of its own: past it, only this block is stopped (its
        exchanges cut, ``Section.cut`` set) and the run goes on."""
        section = Section(
            stop,
            time.monotonic() + seconds if seconds is not None else None,
            f"the {what} of {seconds:g} s ran out" if seconds is not None else "",
        )
        with self._lock:
            self._sections.append(section)
            already = self.stopped is not None
        if already:
            stop()
        try:
            yield section
        finally:
            with self._lock:
                self._sections.remove(section)

    @property
    def cutting(self) -> bool:
        """Whether the run (stopped) or a graceful block's own budget is ending the exchanges in
        flight: what they then fail with is not the target's doing."""
        with self._lock:
            return self.stopped is not None or any(s.cut for s in self._sections)

    def check(self) -> None:
        """Raise ``RunStopped`` if the run was stopped (for code between exchanges)."""
        if self.stopped is not None:
            if threading.get_ident() == self._main:
                self._delivered = True
            raise self.stopped

    @contextmanager
    def exchange(self, seconds: float) -> Iterator[Late]:
        """The current thread's exchange must end within ``seconds``, or its sockets are shut down
        (and the yielded ``Late`` says so, telling a cut from a target's own reset)."""
        tid = threading.get_ident()
        late = Late(time.monotonic() + seconds)
        with self._lock:
            self._exchanges[tid] = late
        try:
            yield late
        finally:
            with self._lock:
                self._exchanges.pop(tid, None)

    def adopt(self, sock: socket.socket) -> None:
        """Track a socket, so that it can be shut down under a late or stopped exchange."""
        with self._lock:
            self._sockets.add(sock)

    def stop(self, kind: str, reason: str) -> None:
        self._stop(RunStopped(kind, reason))

    # the mechanism -----------------------------------------------------------------------
    def _stop(self, stopped: RunStopped) -> None:
        with self._lock:
            if self.stopped is not None:
                return
            self.stopped = stopped
            sections = list(self._sections)
        for section in sections:
            section.stop()
        self._shut_all()

    def _shut_all(self) -> None:
        with self._lock:
            sockets = list(self._sockets)
        for sock in sockets:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)  # wakes a recv blocked on it, in whichever thread

    def _on_signal(self, signum: int, frame: FrameType | None) -> None:
        if signum != _WAKE:
            self._stop(RunStopped(INTERRUPTED, f"interrupted by {signal.Signals(signum).name}"))
            # a second Ctrl-C ends the process the ordinary way
            signal.signal(signal.SIGINT, signal.default_int_handler)
        if self.stopped is not None and not self._sections and not self._delivered:
            self._delivered = True
            raise self.stopped

    def _watch(self) -> None:
        while not self._done.wait(_TICK_S):
            now = time.monotonic()
            with self._lock:
                expired = next((stopped for at, stopped in self._deadlines if now >= at), None)
                late = [tid for tid, ex in self._exchanges.items() if now >= ex.deadline and not ex.cut]
                for tid in late:
                    self._exchanges[tid].cut = True
                spent = [s for s in self._sections if s.deadline is not None and now >= s.deadline and not s.cut]
            if late:
                self._shut_all()
            for section in spent:
                section.cut = section.reason
                section.stop()
                self._shut_all()
            if expired is not None and self.stopped is None:
                self._stop(expired)
                if self._main is not None and not self._sections:
                    signal.pthread_kill(self._main, _WAKE)
