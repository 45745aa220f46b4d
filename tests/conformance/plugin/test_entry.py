"""conformance/plugin/entry.py, what pytest loads in every session of an environment where the kit is
installed: a session that does not ask for a run imports nothing of the suite.

Each session runs in a fresh interpreter in an empty folder and reports the modules it imported.
schemathesis and hypothesis register pytest plugins of their own (which import them whatever this
kit does), so the sessions compare with and without this kit's plugin, and run without theirs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conformance.plugin.entry import LEVELS
from conformance.verdicts.requirements import Level

HEAVY = ("httpx", "aiohttp", "schemathesis", "hypothesis", "yaml", "openapi_core", "conformance.plugin.session")
OURS = {
    "conformance",
    "conformance.plugin",
    "conformance.settings",
    "conformance.settings.arguments",
    "conformance.settings.configfile",
    "conformance.plugin.entry",
    "conformance.plugin.rewrite",
    "specs",
    "specs.program",
}
"""Every module the entry point may add to a session that does not ask for a run."""

THEIRS = ("-p", "no:schemathesis", "-p", "no:hypothesispytest")

SESSION = """
import json, sys, pytest
code = pytest.main(sys.argv[2:])
json.dump({"code": int(code), "modules": sorted(sys.modules)}, open(sys.argv[1], "w"))
"""


def session(folder: Path, *args: str, **env: str) -> tuple[int, set[str]]:
    out = folder.parent / f"{folder.name}.json"
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("CONFORMANCE_", "PYTEST_"))}
    done = subprocess.run(
        [sys.executable, "-c", SESSION, str(out), "-q", "-p", "no:cacheprovider", *args],
        cwd=folder,
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert out.exists(), done.stdout + done.stderr
    result = json.loads(out.read_text(encoding="utf-8"))
    return result["code"], set(result["modules"])


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "test_own.py").write_text("def test_mine():\n    pass\n", encoding="utf-8")
    return folder


def imported(modules: set[str], names: tuple[str, ...]) -> set[str]:
    return {m for m in modules for name in names if m == name or m.startswith(name + ".")}


def test_a_plain_session_imports_nothing_heavy(project: Path) -> None:
    code, modules = session(project, *THEIRS)
    assert code == 0
    assert "conformance.plugin.entry" in modules  # the plugin is loaded, and is all that is
    assert imported(modules, HEAVY) == set()


def test_the_plugin_adds_only_its_entry_point_to_a_plain_session(project: Path) -> None:
    code, with_it = session(project)
    assert code == 0
    _, without = session(project, "-p", "no:agent_conformance")
    assert with_it - without == OURS


def test_a_session_that_asks_for_a_run_imports_the_suite(project: Path) -> None:
    code, modules = session(project, "--collect-only", "--conformance-protocol", "agent-protocol")
    assert code == 0
    assert {"conformance.plugin.session", "conformance.run.plan", "httpx"} <= modules


@pytest.mark.parametrize("how", ["environment", "conformance.toml", "pyproject.toml"])
def test_a_protocol_named_outside_the_command_line_asks_for_a_run(project: Path, how: str) -> None:
    env = {"CONFORMANCE_PROTOCOL": "agent-protocol"} if how == "environment" else {}
    if how == "conformance.toml":
        (project / how).write_text('protocol = "agent-protocol"\n', encoding="utf-8")
    if how == "pyproject.toml":
        (project / how).write_text('[tool.conformance]\nprotocol = "agent-protocol"\n', encoding="utf-8")
    _, modules = session(project, "--collect-only", *THEIRS, **env)
    assert "conformance.plugin.session" in modules


def test_a_pyproject_without_the_table_is_not_read_by_the_suite(project: Path) -> None:
    (project / "pyproject.toml").write_text("[tool.other]\nx = 1\n", encoding="utf-8")
    code, modules = session(project, *THEIRS)
    assert code == 0 and imported(modules, (*HEAVY, "conformance.settings.config")) == set()


def test_the_level_choices_are_the_registrys_levels() -> None:
    assert tuple(level.value for level in Level) == LEVELS
