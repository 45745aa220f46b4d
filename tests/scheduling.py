"""How a session's tests share the pytest-xdist workers (``pytest -n auto``, what ``make test`` and
``make quick`` run): one queue of work units, handed out in collection order to whichever worker
is down to its last tests (pytest-xdist's ``LoadScopeScheduling``: a test running and the next
one sent, as a worker runs a test once it knows the next), the modules with the longest tests
first (``tests/costs.json``, ``tests/conftest.py`` sorts them).

A unit is a whole module, so a fixture it shares among its tests (a peer server, a built wheel, a
mock per module) is set up once, on one worker. The costly modules (those ``tests/costs.json``
names: a test of five seconds or more) are split into units of one test each, so their long
tests (the fault catalogue's, the hostile targets', the reproductions') go to every worker side by
side, unless the module defines a fixture wider than a test: that one stays whole.

Why not pytest-xdist's own modes: ``load`` hands out consecutive chunks (a quarter of each worker's
share at first), so the long modules, wherever they sit, end on one worker while the others idle
(409 s at the end of a full run); ``worksteal`` splits the list in contiguous blocks, so all the
long tests ordered first land on one worker; ``loadgroup``'s groups are lost under pytest 9.2 (it
renames ``item._nodeid``, which pytest no longer reads)."""

from __future__ import annotations

import functools
import json
import re
from pathlib import Path
from typing import Any

from xdist.scheduler import LoadScopeScheduling

ROOT = Path(__file__).resolve().parents[1]
COSTS: dict[str, float] = json.loads((Path(__file__).parent / "costs.json").read_text(encoding="utf-8"))
"""Each costly module's longest test in wall seconds, from a full run (``scripts/test_timeline.py
--write-costs``): a module missing from it is a quick one."""

SHARED_FIXTURE = re.compile(r"@pytest\.fixture\([^)]*scope=\"(?:module|class|package)\"")
"""A fixture wider than one test, as this project declares one (``tests/test_scheduling.py`` holds
this reading of the source equal to pytest's own view of each module's fixtures)."""


def module_of(nodeid: str) -> str:
    return nodeid.split("::", 1)[0]


@functools.cache
def owns_a_shared_fixture(module: str) -> bool:
    """Whether the module (its path from the root, as pytest names it) defines a fixture wider than
    one test. Read from its source: the scheduler runs in the controller, which collects no test."""
    path = ROOT / module
    return path.is_file() and SHARED_FIXTURE.search(path.read_text(encoding="utf-8")) is not None


def spread(module: str) -> bool:
    """Whether the module's tests are units of their own (costly, and sharing no fixture)."""
    return module in COSTS and not owns_a_shared_fixture(module)


def cost(nodeid: str) -> float:
    """The sort key of a test: its module's longest test, 0 for a quick module."""
    return COSTS.get(module_of(nodeid), 0.0)


class CostOrder(LoadScopeScheduling):
    """``LoadScopeScheduling`` with this project's units, in collection order (never re-sorted by
    size: the order is the costs')."""

    def __init__(self, config: Any, log: Any = None) -> None:
        super().__init__(config, log)
        config.option.loadscopereorder = False

    def _split_scope(self, nodeid: str) -> str:
        module = module_of(nodeid)
        return nodeid if spread(module) else module
