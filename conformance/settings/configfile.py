"""Where a run's config file is, found without importing the suite: the pytest plugin asks this in
every pytest session of an environment where the kit is installed (plugin/entry.py), and reads
the file with ``config.py`` only when there is one."""

from __future__ import annotations

import tomllib
from pathlib import Path


def find(explicit: Path | None, cwd: Path) -> tuple[Path, str] | None:
    """The config file and the table in it (``""`` or ``tool.conformance``), or None."""
    if explicit is not None:
        return explicit, "tool.conformance" if explicit.name == "pyproject.toml" else ""
    if (cwd / "conformance.toml").is_file():
        return cwd / "conformance.toml", ""
    pyproject = cwd / "pyproject.toml"
    if pyproject.is_file():
        try:
            data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
        except (OSError, tomllib.TOMLDecodeError):
            return None  # someone else's broken pyproject is not ours to judge unless named
        if isinstance(data.get("tool"), dict) and "conformance" in data["tool"]:
            return pyproject, "tool.conformance"
    return None
