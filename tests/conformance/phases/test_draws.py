"""Generated draws depend on the seed alone: importing a module between two runs changes nothing."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

from conformance.phases.draws import pinned, seed_only

REPO = Path(__file__).resolve().parents[3]


def draws() -> list[str]:
    """What a seeded Hypothesis run draws, as the phases run it (no database, a fixed seed)."""
    out: list[str] = []

    @seed(1234)
    @settings(max_examples=200, database=None, suppress_health_check=list(HealthCheck), deadline=None)
    @given(st.text(max_size=12))
    def collect(value: str) -> None:
        out.append(value)

    collect()
    return out


@pytest.fixture
def local_module(tmp_path: Path) -> Iterator[str]:
    """A module outside site-packages full of string constants, as a user's or the suite's own is."""
    folder = tmp_path / "localcode"
    folder.mkdir()
    words = ", ".join(repr(f"w{n}x") for n in range(400))
    name = f"edges_draws_probe_{uuid.uuid4().hex}"  # a module Hypothesis has never seen in this process
    (folder / f"{name}.py").write_text(f"WORDS = ({words})\n")
    sys.path.insert(0, str(folder))
    try:
        yield name
    finally:
        sys.path.remove(str(folder))
        sys.modules.pop(name, None)


def test_an_import_between_two_runs_changes_no_draw(local_module: str) -> None:
    assert pinned(), "this Hypothesis no longer has the local-constants pool seed_only empties"
    with seed_only():
        before = draws()
    importlib.import_module(local_module)
    with seed_only():
        after = draws()
    assert after == before


_CONTROL = """
import importlib, json, sys
from tests.conformance.phases.test_draws import draws
before = draws()
importlib.import_module(sys.argv[1])
print(json.dumps([before, draws()]))
"""


def test_without_the_pin_the_same_import_changes_the_draws(local_module: str) -> None:
    """The control: the pin is what keeps them equal (if Hypothesis drops the pool, say so here).
    In a fresh interpreter: in a test worker, what the tests before it ran and imported decides
    whether Hypothesis scans the new module (it failed under pytest-xdist, passing alone)."""
    folder = next(p for p in sys.path if Path(p, f"{local_module}.py").exists())
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([folder, str(REPO)])}
    done = subprocess.run(
        [sys.executable, "-c", _CONTROL, local_module], capture_output=True, text=True, env=env, cwd=REPO, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    before, after = json.loads(done.stdout.splitlines()[-1])
    assert after != before
    assert any(v[:1] == "w" and v[-1:] == "x" and v[1:-1].isdigit() for v in after), "no constant of the module drawn"
