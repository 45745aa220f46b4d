"""Shared fixtures: a real mock server on a free loopback port, and an httpx client for it."""

from __future__ import annotations

import contextlib
import os
import resource
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from conformance.check.http import tls_context
from conformance.engine.parallel import usable_cores
from mockserver import MockConfig
from mockserver.embedded import EmbeddedServer
from tests import faultruns
from tests.faultruns import fault_runs
from tests.scheduling import cost
from tests.warmcli import WarmCli, cpu_spent

__all__ = ["fault_runs"]  # a fixture: the session's shared fault runs


@pytest.fixture(scope="session")
def warm_cli() -> Iterator[WarmCli]:
    """The ``conformance`` command, each run in a process of its own forked from one that imported
    the kit once (``tests/warmcli.py``): a run as a user meets it, without its import's CPU."""
    cli = WarmCli()
    yield cli
    cli.close()


@contextmanager
def _serve(**settings: Any) -> Iterator[EmbeddedServer]:
    with EmbeddedServer(MockConfig(**settings)) as server:
        yield server


@pytest.fixture
def serve() -> Callable[..., AbstractContextManager[EmbeddedServer]]:
    """``with serve(protocols=("agent-protocol",), faults=("x",)) as server: server.url``."""
    return _serve


@pytest.fixture(scope="module")
def mock_url() -> Iterator[str]:
    """One all-protocol mock per test module (fast jobs so async tests stay quick)."""
    with _serve(job_seconds=0.2) as server:
        yield server.url


@pytest.fixture
def http(mock_url: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=mock_url, timeout=10, verify=tls_context()) as client:
        yield client


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """``-n auto``: a worker a core and one more. Much of the tests' time is waiting (on fault runs
    made ahead, stalled targets, timeouts, peers starting): with a worker a core the two cores were
    busy 55 % of a full run (24.4 min); with two a core, 72 %, but the long tests, each parallel
    inside, then ran all at once and took up to three times as long (23.4 min, load up to 18):
    docs/development.md, where the tests' time goes."""
    return usable_cores() + 1


def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """``-n`` without ``--dist`` (pytest-xdist's ``load``): the project's queue (tests/scheduling.py)."""
    if config.getvalue("dist") != "load":
        return None
    from tests.scheduling import CostOrder

    return CostOrder(config, log)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests that talk to real third-party packages are slow too: ``-m "not slow"`` leaves them out.
    The modules with the longest tests go first (tests/scheduling.py: no worker is left running a
    long one alone at the end)."""
    for item in items:
        if item.get_closest_marker("interop") is not None:
            item.add_marker(pytest.mark.slow)
    items.sort(key=lambda item: -cost(item.nodeid))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    """Each test's CPU seconds (this process's threads and the processes it waited for), next to
    its wall time in ``--junitxml``: a test that waits costs the cores less than its duration says
    (docs/development.md, where the tests' time goes). Its start too, and its worker: from them the
    run's timeline (how busy each worker was, and when) is drawn again (scripts/test_timeline.py)."""
    before = _cpu()
    item.user_properties.append(("started", round(time.time(), 2)))
    item.user_properties.append(("worker", os.environ.get("PYTEST_XDIST_WORKER", "main")))
    try:
        return (yield)
    finally:
        item.user_properties.append(("cpu_s", round(_cpu() - before, 2)))
        # how many threads and processes its process had left: a thread an earlier
        # test left running shows as a count that grows in one worker's tests, whose cpu_s it swells
        item.user_properties.append(("threads", threading.active_count()))
        item.user_properties.append(("children", _children()))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Iterator[None]:
    """The CPU seconds of the test's setup (a fixture that starts a peer or a browser), beside its
    ``cpu_s``: neither counts the other."""
    before = _cpu()
    try:
        return (yield)
    finally:
        item.user_properties.append(("setup_cpu_s", round(_cpu() - before, 2)))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    """And of its teardown (the last test of a module pays for its module's fixtures' ends)."""
    before = _cpu()
    try:
        return (yield)
    finally:
        item.user_properties.append(("teardown_cpu_s", round(_cpu() - before, 2)))


def _children() -> int:
    """Processes this one started that still run or wait to be reaped (Linux's /proc; 0 elsewhere)."""
    tasks = Path("/proc/self/task")
    if not tasks.is_dir():
        return 0
    found: set[str] = set()
    for task in tasks.iterdir():
        with contextlib.suppress(OSError):  # a thread that ended meanwhile
            found.update((task / "children").read_text().split())
    return len(found)


def _cpu() -> float:
    me, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    # the command-line runs forked by the warm launcher, which this process reaps only at its end
    return me.ru_utime + me.ru_stime + children.ru_utime + children.ru_stime + cpu_spent()


def pytest_collection_finish(session: pytest.Session) -> None:
    faultruns.start(session)


def pytest_sessionfinish(session: pytest.Session) -> None:
    faultruns.stop(session)
