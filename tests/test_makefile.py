"""The Makefile's targets install what each needs and no more: ``make run`` and ``make mock`` the
runtime (the kit and uvloop), the developer targets the tools too; one stamp each, so ``make run``
then ``make test`` installs the tools. Checked with ``make -n`` (what it would run), offline."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
RUNTIME = '-m pip install -q -e ".[uvloop]"'
DEV = '-m pip install -q -e ".[dev,interop,redis,uvloop]"'

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")


def planned(target: str, venv: Path) -> list[str]:
    """The commands ``make TARGET`` would run with the venv at ``venv``."""
    # run from `make test` (as CI does), the outer make's MAKELEVEL/MAKEFLAGS would make this one a
    # sub-make: "Entering directory" lines, and the outer command line's variables
    env = {k: v for k, v in os.environ.items() if k not in ("MAKELEVEL", "MAKEFLAGS", "MFLAGS")}
    command = ["make", "-n", target, f"VENV={venv}"]
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=60, check=True, env=env)
    return done.stdout.splitlines()


def installs(lines: list[str]) -> list[str]:
    return [line for line in lines if "-m pip install" in line and "-U pip" not in line]


def stamp(path: Path) -> None:
    """A stamp newer than pyproject.toml, as a finished install leaves it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.touch()
    later = max(time.time(), (REPO / "pyproject.toml").stat().st_mtime) + 60
    os.utime(path, (later, later))


def test_run_and_mock_install_the_runtime_alone(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    for target in ("run", "mock"):
        lines = planned(target, venv)
        assert lines[0].endswith(f" -m venv {venv}")
        assert [line.removeprefix(f"{venv}/bin/python ") for line in installs(lines)] == [RUNTIME], lines


@pytest.mark.parametrize("target", ["test", "quick", "lint", "types"])
def test_the_developer_targets_install_the_tools_after_a_make_run(tmp_path: Path, target: str) -> None:
    venv = tmp_path / "venv"
    stamp(venv / "bin" / "python")
    stamp(venv / ".runtime")  # `make run` was done
    lines = planned(target, venv)
    assert [line.removeprefix(f"{venv}/bin/python ") for line in installs(lines)] == [DEV], lines
    assert not any("-m venv" in line for line in lines)  # the venv is reused


def test_nothing_is_installed_again_while_both_stamps_are_newer_than_pyproject(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    stamp(venv / "bin" / "python")
    stamp(venv / ".installed")
    stamp(venv / ".runtime")
    assert installs(planned("run", venv)) == [] and installs(planned("test", venv)) == []
