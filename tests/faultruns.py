"""One run per catalogue fault for a whole test session, shared by every test that asks about it:
the selfcheck's verdicts, the reproduction of its findings, the diff of it against a clean run.

A run is a file in a folder every pytest-xdist worker of the session shares: ``<key>.json``
(the run's results.json and its seconds), written whole (a ``.part`` renamed), and beside a whole
run ``<key>.traffic.json``, every exchange it made as the mock saw it (what the proxy's judge is
given to reach its own verdicts from the same traffic); ``<key>.lock`` is
held (``flock``) by the process computing it, so each run is made once whoever asks first.

Runs are made ahead, in the order the session's tests name them (``@pytest.mark.fault_runs``), by
background processes (their CPU is no test's: ``close`` writes it down): a fault's run mostly
waits (a Synapse run spends three quarters of its time on jobs and polls), so the catalogue goes
faster with more runs under way than cores. A test that asks for a run no one has started makes it
at once in a process of its own. Every run is made outside the tests' processes, with
PYTHONHASHSEED pinned as the ``conformance`` command pins it, several in a row in one process as
the ``selfcheck`` command's pool makes them: a run gives the verdicts the commands give whoever
made it."""

from __future__ import annotations

import fcntl
import json
import multiprocessing
import os
import resource
import subprocess
import sys
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass, replace
from multiprocessing.pool import Pool
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from conformance.engine.parallel import hash_seed_pinned, usable_cores
from conformance.engine.runner import run
from conformance.proxy.recorded import RecordedTraffic
from conformance.run.options import PHASE_NAMES
from conformance.selfcheck.catalogue import fault_options
from conformance.verdicts.results import RunResult
from mockserver import EmbeddedServer, Fault, catalogue
from mockserver.app import HOOKS
from mockserver.journal import Entry, Journal
from mockserver.target import serve
from specs.documents import load

MAKERS_PER_CORE = 3
"""Processes making runs ahead, a core (divided among the test workers, rounded up). A run mostly
waits (its chat jobs, its timeouts): with one a worker (three on two cores), each used a third of a
core and the machine sat at a load of 2 while the selfcheck's tests waited for their runs."""
CLEAN = "clean."
"""Key of a protocol's whole run against the mock without a fault: ``clean.<protocol>``."""
OWN = "own."
"""Key of a fault's run of its declared requirements and their phases past the schema phase alone:
``own.<fault>`` (``fault_options(exact=False)`` without ``schema``). Its findings meet fewer
objects other phases made, so more of them can be replayed from a fresh state than those of the
whole run's later phases. The schema phase's findings are read from the whole run (``replayed``)."""
SCHEMA = frozenset({"schema"})
LATER = frozenset(PHASE_NAMES) - SCHEMA
"""Every phase an ``own.`` run makes: all but the schema phase, read from the whole run."""


def replayed(name: str) -> tuple[tuple[str, frozenset[str]], ...]:
    """The runs whose findings of fault ``name`` the reproduction tests replay, each with the phases
    read from it: the whole run's schema phase (its first phase met only what it made itself, as a
    run of the fault's own requirements would: the same findings, without running the costliest
    phase a second time: about 100 s of CPU a session) and the own run's later phases."""
    return (name, SCHEMA), (OWN + name, LATER)


@dataclass(frozen=True)
class FaultRun:
    key: str
    report: dict[str, Any]
    """The run's results.json."""
    seconds: float

    @property
    def result(self) -> RunResult:
        return RunResult.from_dict(self.report)


class _Recording(EmbeddedServer):
    """The embedded mock (``mockserver.target.serve``'s) keeping every exchange whole."""

    def __init__(self, served: EmbeddedServer) -> None:
        super().__init__(served.config)
        self.journal = Journal.whole_traffic()

    def make_app(self) -> web.Application:
        app = super().make_app()
        app[HOOKS].journal = self.journal
        app[HOOKS].refresh()
        return app


def _recorded(entry: Entry) -> RecordedTraffic:
    return RecordedTraffic(
        entry.method,
        entry.path,
        entry.query,
        entry.request_headers,
        bytes(entry.request_body.kept),
        entry.status,
        entry.response_headers,
        bytes(entry.response_body.kept),
        entry.at,
        entry.latency_ms,
        entry.client_left,
    )


def _make(key: str) -> tuple[RunResult, list[RecordedTraffic] | None]:
    """The selfcheck's run of a fault (every requirement of its protocol; a hanging fault with a
    short client timeout, as ``selfcheck.check_fault``) or a protocol's clean run, with the traffic
    it made; or a fault's run of its own requirements."""
    if key.startswith(OWN):
        fault = catalogue()[key.removeprefix(OWN)]
        with serve(fault.protocol, faults=(fault.name,)) as server:
            options = fault_options(fault, server.url + load(fault.protocol).info.base_path, exact=False)
            return run(replace(options, phases=tuple(p for p in options.phases if p not in SCHEMA))), None
    if key.startswith(CLEAN):
        protocol = key.removeprefix(CLEAN)
        fault = Fault("clean", protocol, (), "the mock as it is", control=True)
        timeout = 8.0
    else:
        fault = catalogue()[key]
        timeout = 2.0 if fault.hangs else 8.0
    with _Recording(serve(fault.protocol, faults=() if key.startswith(CLEAN) else (fault.name,))) as server:
        options = fault_options(fault, server.url + load(fault.protocol).info.base_path, timeout=timeout)
        result = run(options)
        # copied whole first (C code, under the interpreter lock): an exchange the client left, a
        # stream say, may still be appended by the mock's thread while the entries are converted
        entries = list(server.journal.entries)
        return result, [_recorded(e) for e in entries]


def make(root: str, key: str, wait: bool) -> bool:
    """Make ``key``'s run unless it exists; False (without waiting) when another process is making
    it and ``wait`` is not set. Module level: what a pool process is handed."""
    folder = Path(root)
    done = folder / f"{key}.json"
    if done.exists():
        return True
    with (folder / f"{key}.lock").open("a") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
        except BlockingIOError:
            return False
        if done.exists():  # made while this process waited for the lock
            return True
        started = time.monotonic()
        result, traffic = _make(key)
        if traffic is not None:
            part = folder / f"{key}.traffic.part"
            part.write_text(json.dumps([e.to_dict() for e in traffic]))
            part.replace(folder / f"{key}.traffic.json")
        part = done.with_suffix(".part")
        part.write_text(json.dumps({"seconds": time.monotonic() - started, "report": result.to_dict()}))
        part.replace(done)
    return True


def ahead(root: str, keys: list[str], parent: int) -> None:
    """Make each run no process has made or started, in order (what a process making runs ahead
    does: several go down the same list, each passing over the runs another holds). It ends when
    the test process that started it (``parent``) does: a session interrupted before its ``close``
    (a worker killed, Ctrl-C) leaves no process making runs for no one."""

    def orphaned() -> None:
        while os.getppid() == parent:
            time.sleep(1)
        os._exit(1)

    threading.Thread(target=orphaned, name="ahead-orphaned", daemon=True).start()
    for key in keys:
        make(root, key, False)


class FaultRuns:
    """The session's runs: ``get(key)`` waits for one (made ahead, or now)."""

    def __init__(self, root: Path, keys: Iterable[str], processes: int) -> None:
        self.root = root
        root.mkdir(parents=True, exist_ok=True)
        order = list(dict.fromkeys(keys))
        # plain processes, not multiprocessing's: a test that starts a multiprocessing process (the
        # selfcheck command's pool) reaps every one of those that has ended, and their CPU would be
        # counted as that test's (one test was charged 340 s of the runs made ahead)
        env = {**os.environ, "PYTHONHASHSEED": os.environ.get("PYTHONHASHSEED", "0"), "PYTHONPATH": str(REPO)}
        command = [sys.executable, "-c", AHEAD, str(root), json.dumps(order), str(os.getpid())]
        # what a run prints (the mock's log of each crash a fault makes) goes to a file of the
        # folder: these processes start before pytest captures any test's output
        self._ahead: list[subprocess.Popen[bytes]] = []
        for n in range(processes if order else 0):
            with (root / f"ahead-{os.getpid()}-{n}.log").open("ab") as log:
                self._ahead.append(subprocess.Popen(command, env=env, cwd=REPO, stdout=log, stderr=subprocess.STDOUT))
        with hash_seed_pinned():  # the pool's process starts here and inherits it
            log_path = str(root / f"now-{os.getpid()}.log")
            self._now: Pool = multiprocessing.get_context("spawn").Pool(1, _output_to, (log_path,))

    def get(self, key: str) -> FaultRun:
        done = self.root / f"{key}.json"
        if not done.exists():
            self._now.apply(make, (str(self.root), key, True))
        data = json.loads(done.read_text(encoding="utf-8"))
        return FaultRun(key, data["report"], data["seconds"])

    def traffic(self, key: str) -> list[RecordedTraffic]:
        """Every exchange a whole run (a fault's, ``clean.<protocol>``) made, in the order the mock
        answered them."""
        self.get(key)
        data = json.loads((self.root / f"{key}.traffic.json").read_text(encoding="utf-8"))
        return [RecordedTraffic.from_dict(e) for e in data]

    def close(self) -> None:
        """Runs not yet made are not made: the processes making them ahead are killed (a lock dies
        with its holder, and a half-written run is a ``.part`` no one reads). Killed, not
        terminated: a run stops gracefully on SIGTERM (``parallel.py``), which may take its budget.
        Their CPU seconds are written to ``ahead-cpu-<pid>.txt`` in the folder: no test's ``cpu_s``
        holds them."""
        before = _children_cpu()
        for process in self._ahead:
            process.kill()
            process.wait()
        (self.root / f"ahead-cpu-{os.getpid()}.txt").write_text(f"{_children_cpu() - before:.2f}\n")
        self._now.terminate()
        self._now.join()


def _output_to(path: str) -> None:
    """A pool process's stdout and stderr, to ``path`` (its initializer)."""
    with open(path, "ab") as log:
        os.dup2(log.fileno(), 1)
        os.dup2(log.fileno(), 2)


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


AHEAD = (
    "import json, sys; from tests.faultruns import ahead; ahead(sys.argv[1], json.loads(sys.argv[2]), int(sys.argv[3]))"
)
"""What a process making runs ahead runs (``ahead``, its folder, the keys in order, the test process)."""
REPO = Path(__file__).resolve().parents[1]


def reads(value: Any, *keys: str) -> Any:
    """A test parameter that reads the runs ``keys`` (so the session makes them ahead)."""
    return pytest.param(value, marks=pytest.mark.fault_runs(*keys))


def wanted(items: Iterable[pytest.Item]) -> list[str]:
    """The runs the session's tests name, in their order."""
    return [key for item in items for mark in item.iter_markers("fault_runs") for key in mark.args]


RUNS = pytest.StashKey["FaultRuns"]()


def start(session: pytest.Session) -> None:
    """Begin the runs the session's tests name as soon as they are known (``pytest_collection_finish``,
    tests/conftest.py), not when the first test asks for them: the long tests that go first (the
    hostile targets) mostly wait, and the runs took the first two minutes of a full run unmade.
    Under pytest-xdist the folder is the session's, above each worker's own, and each worker makes
    runs ahead in its share of ``MAKERS_PER_CORE`` processes a core (the controller collects none)."""
    keys = wanted(session.items)
    # a collection alone runs nothing (tests/test_scheduling.py collects the project in a pytest of
    # its own, inheriting this worker's PYTEST_XDIST_WORKER: it began makers in a folder above it)
    if not keys or session.config.option.collectonly:
        return
    base = session.config._tmp_path_factory.getbasetemp()  # what the tmp_path_factory fixture returns
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    root = (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / "fault-runs"
    session.config.stash[RUNS] = FaultRuns(root, keys, -(-MAKERS_PER_CORE * usable_cores() // workers))


def stop(session: pytest.Session) -> None:
    runs = session.config.stash.get(RUNS, None)
    if runs is not None:
        runs.close()


@pytest.fixture(scope="session")
def fault_runs(request: pytest.FixtureRequest) -> FaultRuns:
    """The session's runs, begun when collection finished."""
    runs = request.config.stash.get(RUNS, None)
    assert runs is not None, "the session's fault runs were not begun (tests/conftest.py: pytest_collection_finish)"
    return runs
