"""The options of one run of one protocol: what the command line, the config file and the
environment settled, as the plan and the phases read them."""

from __future__ import annotations

from dataclasses import dataclass

from ..verdicts.baseline import Entry
from ..verdicts.requirements import Level


@dataclass(frozen=True, slots=True)
class RunOptions:
    protocol: str
    base_url: str = ""
    token: str | None = None
    second_token: str | None = None
    seed: int = 0
    max_examples: int = 10
    timeout: float = 10.0
    level: Level = Level.MAY
    profile: str | None = None
    budget_s: float = 600.0
    """Whole-run time budget; checks not started by then are reported as errors."""
    phases: tuple[str, ...] = ("schema", "model", "scenario")
    only: tuple[str, ...] = ()
    """Run only these requirement ids (prefix match); empty runs all."""
    skip: tuple[str, ...] = ()
    """Leave out these requirement ids (prefix match)."""
    expected_failures: tuple[Entry, ...] = ()
    """The ``--expected-failures`` baseline's entries (``verdicts/baseline.py``)."""
    target_name: str = ""
    target_version: str = ""
    """The implementation under test, as the vendor names it (reported, never interpreted)."""
