"""The ``conformance`` command run as a user runs it, each run in a process of its own, without
paying the kit's import each time.

A launcher process (``python -m tests.warmcli``, started once per test process and shared)
imports the kit once, with PYTHONHASHSEED pinned as ``launch.entry`` pins it, then forks a child
per run: the child has a fresh copy of that state, its own working directory, stdin from
``/dev/null`` and stdout and stderr in files, calls ``cli.main`` with the arguments and exits with
its return code (an uncaught exception prints its traceback to stderr and exits 1, as the
interpreter does). What the run does is the command's own: only the import is shared.

The launcher is single-threaded (so forking it is safe) and reaps its children. Their CPU would
reach the test process only when it reaps the launcher, at the session's end: so the launcher
reports each run's CPU seconds (``os.wait4``, the run and what it reaped) and its own import's, and
``cpu_spent()`` sums them for the tests' ``cpu_s`` (tests/conftest.py).

Protocol, one JSON object a line: to the launcher ``{"id", "argv", "cwd", "out", "err"}``; from it
``{"cpu"}`` once it has imported the kit, ``{"id", "pid"}`` once a run is forked and ``{"id",
"code", "cpu"}`` once it exited.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import pkgutil
import resource
import select
import subprocess
import sys
import threading
import traceback
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path

from specs import heap

REPO = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Completed:
    returncode: int
    stdout: str
    stderr: str


_SPENT = 0.0
_SPENT_LOCK = threading.Lock()


def cpu_spent() -> float:
    """CPU seconds of every launcher of this process so far: its import and its ended runs."""
    with _SPENT_LOCK:
        return _SPENT


class Running:
    """A run under way: ``wait()`` for its outcome, ``kill()`` it."""

    def __init__(self, folder: Path) -> None:
        self.pid: Future[int] = Future()
        self.code: Future[int] = Future()
        self._out, self._err = folder / "stdout", folder / "stderr"

    def wait(self, timeout: float | None = None) -> Completed:
        """The outcome; ``TimeoutError`` (the run left running) when it takes longer than ``timeout``."""
        code = self.code.result(timeout)
        return Completed(code, self._out.read_text(errors="replace"), self._err.read_text(errors="replace"))

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError):  # already gone
            os.kill(self.pid.result(10), 9)


class WarmCli:
    """The launcher's client: ``start(argv, cwd)`` from any thread."""

    def __init__(self) -> None:
        env = {**os.environ, "PYTHONHASHSEED": os.environ.get("PYTHONHASHSEED", "0"), "PYTHONPATH": str(REPO)}
        self._proc = subprocess.Popen(
            [sys.executable, "-m", "tests.warmcli"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            cwd=REPO,
            env=env,
        )
        self._runs: dict[int, Running] = {}
        self._lock = threading.Lock()
        self._next = 0
        self._reported = 0.0
        """CPU seconds the launcher reported (counted in ``cpu_spent`` until it is reaped)."""
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def start(self, argv: list[str], cwd: Path, folder: Path | None = None) -> Running:
        """Runs ``conformance *argv`` in ``cwd``; its output is kept in ``folder`` (by default a
        folder of ``cwd`` named for the run)."""
        with self._lock:
            self._next += 1
            rid = self._next
            folder = folder or cwd / f".warmcli-{rid}"
            folder.mkdir(parents=True, exist_ok=True)
            running = self._runs[rid] = Running(folder)
            assert self._proc.stdin is not None
            request = {"id": rid, "argv": argv, "cwd": str(cwd), "out": str(running._out), "err": str(running._err)}
            self._proc.stdin.write(json.dumps(request) + "\n")
            self._proc.stdin.flush()
        return running

    def run(self, argv: list[str], cwd: Path, timeout: float = 600) -> Completed:
        running = self.start(argv, cwd)
        try:
            return running.wait(timeout)
        except TimeoutError:
            running.kill()
            raise

    def _read(self) -> None:
        global _SPENT
        assert self._proc.stdout is not None
        for line in self._proc.stdout:
            message = json.loads(line)
            with _SPENT_LOCK:  # counted before the run is said to be over
                _SPENT += message.get("cpu", 0.0)
                self._reported += message.get("cpu", 0.0)
            if "id" not in message:
                continue
            with self._lock:
                running = self._runs[message["id"]]
            if "pid" in message:
                running.pid.set_result(message["pid"])
            else:
                running.code.set_result(message["code"])
        with self._lock:  # the launcher is gone: no run still waited for ever finishes
            for running in self._runs.values():
                if not running.code.done():
                    running.code.set_exception(RuntimeError("the launcher exited"))

    def close(self) -> None:
        """Ends the launcher (it kills the runs still under way) and reaps it."""
        assert self._proc.stdin is not None
        self._proc.stdin.close()
        self._proc.wait(60)
        self._reader.join(10)
        global _SPENT
        with _SPENT_LOCK:  # reaped: its CPU and its runs' are this process's children's now, not to count twice
            _SPENT -= self._reported


# --- the launcher ----------------------------------------------------------------------------------


def _child(request: dict[str, object]) -> None:
    """In the forked child: the command, then exit (never back into the launcher's loop)."""
    code = 1
    try:
        os.chdir(str(request["cwd"]))
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        for fd, key in ((1, "out"), (2, "err")):
            target = os.open(str(request[key]), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            os.dup2(target, fd)
            os.close(target)
        from conformance.cli.commands import main
        from conformance.launch import PROGRAM
        from specs.program import program_name

        argv = request["argv"]
        assert isinstance(argv, list)
        code = main(argv, prog=os.environ.pop(PROGRAM, None) or program_name("conformance", "__main__.py"))
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except BaseException:  # what the interpreter would print, and its exit code
        traceback.print_exc()
        code = 1
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):  # a closed stream loses nothing more by this
                stream.flush()
        os._exit(code)


PRELOAD = ("conformance", "schemathesis", "httpcore", "h11", "anyio", "requests", "urllib3", "sqlite3", "xml.etree")
"""Packages whose modules a run may import (its phases', protocols' and reports' lazy imports)."""


def _preload() -> None:
    """Every module of ``PRELOAD``, imported once here (what an optional dependency lacks is left)."""
    for name in PRELOAD:
        package = importlib.import_module(name)
        for module in pkgutil.walk_packages(getattr(package, "__path__", []), f"{name}.", onerror=lambda _: None):
            if ".tests" in module.name or module.name.endswith("__main__"):
                continue
            try:
                importlib.import_module(module.name)
            except Exception:  # an extra's module whose dependency is not installed
                continue


def _say(message: dict[str, float]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def launcher() -> None:
    _preload()
    heap.settle()  # as a run settles its own: each forked child starts with the imports frozen
    me = resource.getrusage(resource.RUSAGE_SELF)
    _say({"cpu": me.ru_utime + me.ru_stime})
    children: dict[int, int] = {}  # pid -> request id
    pending = b""
    open_input = True
    while open_input or children:
        readable, _, _ = select.select([0] if open_input else [], [], [], 0.05)
        if readable:
            chunk = os.read(0, 1 << 16)
            if not chunk:
                open_input = False
                for pid in children:  # the tests are done with them
                    os.kill(pid, 9)
            pending += chunk
            *lines, pending = pending.split(b"\n")
            for line in lines:
                request = json.loads(line)
                pid = os.fork()
                if pid == 0:
                    _child(request)
                children[pid] = request["id"]
                _say({"id": request["id"], "pid": pid})
        while children:
            pid, status, usage = os.wait4(-1, os.WNOHANG)
            if pid == 0:
                break
            cpu = usage.ru_utime + usage.ru_stime
            _say({"id": children.pop(pid), "code": os.waitstatus_to_exitcode(status), "cpu": cpu})


if __name__ == "__main__":
    launcher()
