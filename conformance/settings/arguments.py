"""The command-line options several commands take (run, client, proxy), declared once so that
their names, types and help say the same thing everywhere; each command adds what is its own."""

from __future__ import annotations

import argparse
from pathlib import Path

from specs.documents import PROTOCOLS

BASELINE_HELP = "YAML baseline of known failures: listed ones do not fail the run, listed ones that pass do (stale)"


def _key(key: str | None) -> str:
    return f" (config key {key})" if key else ""


def add_protocol(p: argparse.ArgumentParser, *, every: bool = True, extra: str = "") -> None:
    """``--protocol ID`` (and ``all`` when ``every``), which the config or the environment may give."""
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
