"""The session's work units (tests/scheduling.py): a costly module's tests spread over the workers,
longest first; a module sharing a fixture among its tests kept whole, on one worker."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from types import SimpleNamespace
from typing import Any

from tests import scheduling
from tests.scheduling import COSTS, CostOrder, owns_a_shared_fixture, spread

# a plugin for a collect-only run: each module whose tests use a fixture of its own wider than a test
VIEW = """
import json
def pytest_collection_finish(session):
    owners = set()
    for item in session.items:
        module = item.nodeid.split("::", 1)[0]
        for chain in item._fixtureinfo.name2fixturedefs.values():
            if any(d.scope != "function" and d.baseid.startswith(module) for d in chain):
                owners.add(module)
    print("OWNERS " + json.dumps(sorted(owners)))
"""


def test_the_source_reading_of_shared_fixtures_is_pytests_own(tmp_path: Any) -> None:
    """The controller reads each module's source for a fixture wider than a test (it collects no
    test); pytest's collection says which modules' tests use one of their own: the same modules."""
    (tmp_path / "fixtureview.py").write_text(VIEW)
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "fixtureview", "-p", "no:cacheprovider"],
        capture_output=True,
        text=True,
        cwd=scheduling.ROOT,
        env={**os.environ, "PYTHONPATH": str(tmp_path)},
        timeout=300,
    )
    line = next(line for line in out.stdout.splitlines() if line.startswith("OWNERS "))
    owners = set(json.loads(line.removeprefix("OWNERS ")))
    modules = {line.split("::", 1)[0] for line in out.stdout.splitlines() if "::" in line}
    assert owners, "no module shares a fixture: the view found nothing to compare"
    read = {m for m in modules if owns_a_shared_fixture(m)}
    assert owners <= read, f"shared fixtures the source reading misses: {sorted(owners - read)}"
    # a test may ask for one by name at run time (request.getfixturevalue), unseen by collection
    unseen = [m for m in read - owners if "getfixturevalue" not in (scheduling.ROOT / m).read_text()]
    assert not unseen, f"read as sharing a fixture, and pytest sees none: {unseen}"


def test_costly_modules_are_spread_unless_they_share_a_fixture() -> None:
    assert spread("tests/conformance/test_hostile_targets.py")
    assert spread("tests/conformance/selfcheck/test_catalogue.py")
    assert "tests/interop/test_agent_protocol_sdk.py" in COSTS
    assert not spread("tests/interop/test_agent_protocol_sdk.py")  # the SDK server, started once
    assert not spread("tests/conformance/check/test_judgments.py")  # quick: one unit


class _Node:
    def __init__(self, name: str) -> None:
        self.gateway, self.shutting_down, self.sent = SimpleNamespace(id=name), False, []

    def send_runtest_some(self, indices: list[int]) -> None:
        self.sent.extend(indices)

    def shutdown(self) -> None:
        self.shutting_down = True


def _config(workers: int) -> Any:
    values = {"tx": [f"{workers}*popen"], "numprocesses": workers}
    return SimpleNamespace(getvalue=values.get, option=SimpleNamespace(loadscopereorder=True))


def test_the_longest_tests_start_on_different_workers_and_a_whole_module_stays_on_one() -> None:
    long = "tests/conformance/test_hostile_targets.py"
    whole = "tests/interop/test_agent_protocol_sdk.py"
    collection = [f"{long}::test_{n}" for n in range(4)] + [f"{whole}::test_{n}" for n in range(3)]
    sched = CostOrder(_config(2), None)
    nodes = [_Node("gw0"), _Node("gw1")]
    for node in nodes:
        sched.add_node(node)
        sched.add_node_collection(node, collection)
    sched.schedule()
    first, second = nodes
    # one long test running and the next sent, on each worker: not the two longest on one
    assert first.sent == [0, 2] and second.sent == [1, 3]
    sched.mark_test_complete(first, 0)
    assert first.sent == [0, 2, 4, 5, 6]  # the module with a shared fixture, whole, to one worker
    sched.mark_test_complete(second, 1)
    assert second.sent == [1, 3] and second.shutting_down  # nothing left to hand out
