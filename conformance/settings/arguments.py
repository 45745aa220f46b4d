"""The command-line options several faces take (run, client, proxy, and the pytest plugin's
``--conformance-*``), declared once so that their names, types and help say the same thing
everywhere; each face adds what is its own. An option's name is its config key
(``settings/config.py``'s ``KEYS``; a test holds them equal). Light on purpose: the pytest plugin's
entry point declares its options from here in every pytest session, so nothing of the suite is
imported at module level."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

LEVELS = ("must", "should", "may")
"""``requirements.Level``'s values, written out so that the options need no import of the suite."""
DEPTHS = ("smoke", "default", "deep", "soak")
"""``run.depth.DEPTHS``' names, written out for the same reason."""

BASELINE_HELP = "YAML baseline of known failures: listed ones do not fail the run, listed ones that pass do (stale)"


def _key(key: str | None) -> str:
    return f" (config key {key})" if key else ""


def add_protocol(p: argparse.ArgumentParser, *, every: bool = True, extra: str = "") -> None:
    """``--protocol ID`` (and ``all`` when ``every``), which the config or the environment may give."""
    from specs.documents import PROTOCOLS

    choices = [*sorted(PROTOCOLS), "all"] if every else sorted(PROTOCOLS)
    p.add_argument(
        "--protocol", choices=choices, help="required unless the config or CONFORMANCE_PROTOCOL names one" + extra
    )


def add_config(p: argparse.ArgumentParser, keys: str = "") -> None:
    """``--config FILE``; ``keys`` names the file's keys the command reads, when not all of run's."""
    p.add_argument(
        "--config",
        type=Path,
        metavar="FILE",
        help="default ./conformance.toml, else pyproject.toml" + (f": {keys}" if keys else ""),
    )


def add_report_dir(p: argparse.ArgumentParser, default: str, *, key: str | None = None, extra: str = "") -> None:
    p.add_argument("--report-dir", type=Path, help=f"default {default}{extra}{_key(key)}")


def add_seed(p: argparse.ArgumentParser, what: str = "") -> None:
    p.add_argument("--seed", type=int, help=f"{what}default 0")


def add_expected_failures(p: argparse.ArgumentParser, *, key: str | None = None) -> None:
    p.add_argument("--expected-failures", type=Path, metavar="FILE", help=BASELINE_HELP + _key(key))


@dataclass(frozen=True)
class Option:
    """An option of a run that ``run`` and the pytest plugin (as ``--conformance-<key>``) both take."""

    key: str
    help: str
    type: Callable[[str], Any] | None = None
    metavar: str | None = None
    choices: tuple[str, ...] | None = None
    repeat: bool = False
    dest: str | None = None
    """``run``'s name for it where the key is not a ``RunOptions`` field's."""


RUN_OPTIONS = {
    o.key: o
    for o in (
        Option(
            "base-url",
            "URL the document's paths are appended to (synapse-agent: include /repo/v1); "
            "default: start the embedded reference mock",
        ),
        Option("token", "bearer token (synapse-agent)"),
        Option("second-token", "a second user's token, for ownership (403) requirements"),
        Option(
            "depth",
            "a named campaign: cases per operation, model sequences and budget (default: default; docs/usage.md)",
            choices=DEPTHS,
        ),
        Option("max-examples", "generated cases per operation and phase (default: the depth's)", int),
        Option("timeout", "seconds per connect/read/exchange (default 10)", float),
        Option("level", "run requirements of this level and stricter (exit code still gates on MUST)", choices=LEVELS),
        Option("budget", "whole-run time budget per protocol, seconds (default: the depth's)", float, dest="budget_s"),
        Option("only", "run only these requirements", metavar="ID_PREFIX", repeat=True),
        Option("skip", "leave these requirements out", metavar="ID_PREFIX", repeat=True),
        Option(
            "requirements",
            "score this frozen requirement set (PROTOCOL/RELEASE, or RELEASE for each protocol; "
            "list them with: requirements --sets); newer requirements run, reported not scored",
            metavar="SET",
            dest="requirement_set",
        ),
        Option(
            "sign-key",
            "sign each report with this Ed25519 private key (PEM; make one with keygen): signature.json",
            Path,
            "FILE",
        ),
    )
}


def add(p: argparse.ArgumentParser, key: str) -> None:
    """``run``'s ``--<key>``."""
    o = RUN_OPTIONS[key]
    extra: dict[str, Any] = {"dest": o.dest} if o.dest else {}
    p.add_argument(f"--{key}", help=o.help, **_shape(o), **extra)


def add_prefixed(add_option: Callable[..., Any], key: str, prefix: str) -> None:
    """The same option as ``--<prefix><key>`` through another parser's ``addoption`` (pytest's),
    under that parser's own name for it (the session reads it back by its flag)."""
    o = RUN_OPTIONS[key]
    add_option(f"--{prefix}{key}", default=None, help=o.help, **_shape(o))


def _shape(o: Option) -> dict[str, Any]:
    shape: dict[str, Any] = {}
    if o.type is not None:
        shape["type"] = o.type
    if o.metavar:
        shape["metavar"] = o.metavar
    if o.choices:
        shape["choices"] = list(o.choices)
    if o.repeat:
        shape["action"] = "append"
    return shape
