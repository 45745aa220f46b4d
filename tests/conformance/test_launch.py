"""launch.py: the console script re-executes itself with string hashing pinned, and the program
keeps the name it was invoked by across that re-execution."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from specs.program import __version__

REPO = Path(__file__).resolve().parents[2]

# what the console script's wrapper does: sys.argv[0] is the script, then entry() runs
SCRIPT = (
    "import sys; sys.argv[0] = '/venv/bin/agent-conformance'; from conformance.launch import entry; sys.exit(entry())"
)


def invoke(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if k not in ("PYTHONHASHSEED", "AGENT_CONFORMANCE_PROGRAM")}
    return subprocess.run(
        [sys.executable, "-c", SCRIPT, *args],
        env={**base, "PYTHONPATH": str(REPO), **env},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_version_names_the_console_script_after_the_re_execution() -> None:
    done = invoke("--version")
    assert (done.returncode, done.stdout) == (0, f"agent-conformance {__version__}\n"), done.stderr


def test_a_usage_error_names_the_console_script() -> None:
    done = invoke("run", "--protocol", "nope")
    assert done.returncode == 2
    assert done.stderr.startswith("agent-conformance run: error: argument --protocol")
    assert "(see agent-conformance run --help)" in done.stderr


def test_with_the_hash_seed_given_it_runs_in_place_under_the_same_name() -> None:
    done = invoke("--version", PYTHONHASHSEED="3")
    assert done.stdout == f"agent-conformance {__version__}\n", done.stderr
