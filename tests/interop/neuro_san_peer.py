"""The neuro-san 0.7.15 peer venv: Python 3.12, found through pyenv or on PATH.

neuro-san 0.7.x requires Python >= 3.12 and the project's venv may be older, so its client and
server run from ``.peers/neuro-san-0.7.15`` (peers.py), built from the first Python 3.12 found:
``$(pyenv root)/versions/3.12.*`` (highest first), then ``python3.12`` on PATH. Where there is
none, :class:`PeerUnavailable` says so and the tests are skipped with that reason.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from .peers import PeerUnavailable, peer_python

PACKAGE = "neuro-san==0.7.15"
INSTALL_TIMEOUT_S = 600.0
"""Measured: 186 s for a cold install on a 2-core machine (about 100 packages, langchain among them)."""


def _version_key(path: Path) -> tuple[int, ...]:
    return tuple(int(part) if part.isdigit() else -1 for part in path.name.split("."))


def _reports_312(interpreter: str) -> bool:
    try:
        done = subprocess.run(
            [interpreter, "-c", "import sys; print(sys.version_info[:2] == (3, 12))"],
            capture_output=True,
            text=True,
            timeout=20,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.stdout.strip() == "True"


def _pyenv_candidates() -> list[str]:
    pyenv = shutil.which("pyenv")
    if pyenv is None:
        return []
    try:
        root = subprocess.run([pyenv, "root"], capture_output=True, text=True, timeout=20, check=False).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        return []
    versions = sorted(Path(root, "versions").glob("3.12.*"), key=_version_key, reverse=True) if root else []
    return [str(v / "bin" / "python") for v in versions]


def python312() -> str:
    """A Python 3.12 interpreter that runs (a pyenv shim for an inactive version does not)."""
    on_path = shutil.which("python3.12")
    for candidate in [*_pyenv_candidates(), *([on_path] if on_path else [])]:
        if _reports_312(candidate):
            return candidate
    raise PeerUnavailable("no Python 3.12 found (neither under `pyenv root`/versions nor python3.12 on PATH)")


def neuro_san_python() -> Path:
    """The interpreter of the neuro-san 0.7.15 venv, built on first use."""
    return peer_python(PACKAGE, python=python312(), timeout_s=INSTALL_TIMEOUT_S)
