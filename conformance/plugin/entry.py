"""The pytest plugin as pytest loads it (the ``pytest11`` entry point), in every pytest session of
an environment where the kit is installed: it adds the ``--conformance-*`` options, the level
markers and the ``conformance_run`` fixture, and imports nothing of the suite until a session asks
for a run. Only then is ``session.py`` (the items, the run, the merged reports; it brings
httpx, aiohttp, schemathesis and hypothesis) imported and registered.

A session asks for a run when ``--conformance-protocol`` or ``--conformance-config`` is given, when
``CONFORMANCE_PROTOCOL`` is set, or when the rootdir's config file (``conformance.toml`` or a
``[tool.conformance]`` table in ``pyproject.toml``) names a protocol; the file is read by the
suite's own loader only when it exists.
"""

from __future__ import annotations

import os
from importlib import import_module
from typing import TYPE_CHECKING

import pytest

from conformance.plugin.rewrite import unrewritten
from conformance.settings.arguments import LEVELS, RUN_OPTIONS, add_prefixed
from conformance.settings.configfile import find

if TYPE_CHECKING:
    from conformance.verdicts.results import RunResult


_ACTIVE = pytest.StashKey[bool]()
SESSION_PLUGIN = "agent_conformance.session"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("conformance", "agent API conformance suite")
    group.addoption("--conformance-protocol", help="protocol id or 'all'; adds one test per requirement")
    group.addoption("--conformance-seed", type=int, default=None)
    for key in RUN_OPTIONS:  # what run takes too, declared once (settings/arguments.py)
        add_prefixed(group.addoption, key, "conformance-")
    group.addoption("--conformance-expected-failures", default=None, metavar="FILE")
    group.addoption("--conformance-config", default=None, metavar="FILE")
    group.addoption(
        "--conformance-report-dir",
        default=None,
        metavar="DIR",
        help="write the merged reports (one folder per protocol when several)",
    )


def active(config: pytest.Config) -> bool:
    """Whether this session asks for a run (the module docstring says how); cached."""
    if _ACTIVE not in config.stash:
        named = config.getoption("--conformance-protocol", None) or os.environ.get("CONFORMANCE_PROTOCOL")
        explicit = config.getoption("--conformance-config", None)
        if not named and not explicit and find(None, config.rootpath) is not None:
            from conformance.settings import config as settings

            try:
                named = settings.load(None, config.rootpath, os.environ).common.get("protocol")
            except settings.ConfigError as exc:
                raise pytest.UsageError(f"conformance: {exc}") from None
        config.stash[_ACTIVE] = bool(named or explicit)
    return config.stash[_ACTIVE]


def pytest_configure(config: pytest.Config) -> None:
    for level in LEVELS:
        config.addinivalue_line("markers", f"{level}: a conformance requirement of level {level.upper()}")
    if active(config):
        with unrewritten():
            plugin = import_module(".session", __package__)
        # registered inside pytest_configure, its own pytest_configure is called next (a historic hook)
        config.pluginmanager.register(plugin, SESSION_PLUGIN)


@pytest.fixture(scope="session")
def conformance_run(pytestconfig: pytest.Config) -> RunResult:
    """A whole run's results, in this process (requires --conformance-protocol naming one protocol)."""
    if not active(pytestconfig):
        pytest.skip("--conformance-protocol not given")
    from conformance.engine.runner import run
    from conformance.plugin.session import plans

    chosen = plans(pytestconfig)
    if len(chosen) != 1:
        pytest.skip("conformance_run needs one protocol; use --conformance-report-dir for several")
    [options] = chosen.values()
    return run(options)


__all__ = ["LEVELS", "active", "conformance_run", "pytest_addoption", "pytest_configure"]
