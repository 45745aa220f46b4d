"""The options run and the pytest plugin share are declared once: each is a config key, and both
faces take it with the same type, choices and help."""

from __future__ import annotations

import argparse

import pytest

from conformance.cli.commands import parser
from conformance.plugin import entry
from conformance.run.depth import DEPTHS
from conformance.settings.arguments import DEPTHS as WRITTEN_DEPTHS
from conformance.settings.arguments import LEVELS, RUN_OPTIONS
from conformance.settings.config import KEYS
from conformance.verdicts.requirements import Level


def _run_actions() -> dict[str, argparse.Action]:
    sub = next(a for a in parser()._actions if isinstance(a, argparse._SubParsersAction))
    return {flag: action for action in sub.choices["run"]._actions for flag in action.option_strings}


def _plugin_options() -> dict[str, dict[str, object]]:
    seen: dict[str, dict[str, object]] = {}

    class Group:
        def addoption(self, *flags: str, **attrs: object) -> None:
            for flag in flags:
                assert flag not in seen, f"{flag} declared twice"
                seen[flag] = attrs

    class Parser:
        def getgroup(self, *_: object) -> Group:
            return Group()

    entry.pytest_addoption(Parser())  # type: ignore[arg-type]
    return seen


@pytest.mark.parametrize("key", sorted(RUN_OPTIONS))
def test_a_shared_option_is_a_config_key_that_run_and_the_plugin_take_alike(key: str) -> None:
    option = RUN_OPTIONS[key]
    assert key in KEYS, f"--{key} is not a config key"
    run = _run_actions()[f"--{key}"]
    plugin = _plugin_options()[f"--conformance-{key}"]
    assert run.help == plugin["help"] == option.help
    assert run.type is plugin.get("type") is option.type
    assert run.choices == plugin.get("choices")
    assert (run.dest or "") == (option.dest or KEYS[key].field), "run's name for it must be the RunOptions field's"


def test_the_written_out_levels_and_depths_are_the_suites() -> None:
    assert tuple(level.value for level in Level) == LEVELS
    assert tuple(DEPTHS) == WRITTEN_DEPTHS
