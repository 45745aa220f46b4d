"""The README's ``.venv/bin/pytest --conformance-protocol agent-protocol``, run where a reader runs
it: the clone's root, whose ``testpaths`` name the kit's own tests. A command line naming a
protocol and no path collects the conformance items alone; one naming a path collects both."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
SELECTION = ["--conformance-only", "AP-TASK-001", "-p", "no:cacheprovider"]  # one item: quick


def pytest_in_the_clone(*argv: str) -> subprocess.CompletedProcess[str]:
    script = Path(sys.executable).with_name("pytest")  # the venv's, as the README names it
    command = [str(script)] if script.exists() else [sys.executable, "-m", "pytest"]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CONFORMANCE_", "PYTEST_"))}
    return subprocess.run(
        [*command, *argv], cwd=REPO, env=env, capture_output=True, text=True, timeout=300, check=False
    )


def test_the_readmes_command_runs_the_conformance_items_alone() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    [line] = [line for line in readme.splitlines() if "--conformance-protocol" in line]
    assert line.startswith(".venv/bin/pytest --conformance-protocol agent-protocol ")  # the command tested here
    done = pytest_in_the_clone("--conformance-protocol", "agent-protocol", *SELECTION)
    assert done.returncode == 0, done.stdout + done.stderr
    assert re.search(r"^collected 0 items\b", done.stdout, re.M), done.stdout  # none of the kit's own tests
    assert re.search(r"^=+ 1 passed in ", done.stdout, re.M), done.stdout  # the requirement's item alone


def test_a_path_on_the_command_line_is_collected_beside_them() -> None:
    done = pytest_in_the_clone("tests/test_makefile.py", "--conformance-protocol", "agent-protocol", *SELECTION)
    assert done.returncode == 0, done.stdout + done.stderr
    collected = re.search(r"^collected (\d+) items\b", done.stdout, re.M)
    passed = re.search(r"^=+ (\d+) passed in ", done.stdout, re.M)
    assert collected and passed, done.stdout
    assert int(passed.group(1)) == int(collected.group(1)) + 1 > 2, done.stdout  # the file's tests and the item
