"""The options of one run of one protocol: what the command line, the config file and the
environment settled, as the plan and the phases read them."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..verdicts.baseline import Entry
from ..verdicts.requirements import Level
from .depth import model_sequences
from .exampledb import ExampleDb
from .shards import WHOLE, Shard

PHASE_NAMES = ("schema", "model", "scenario")
"""The phases that decide requirements, in the order they run (after the preflight): what
``Requirement.phase`` names, ``--phase`` chooses from and a plan groups by."""


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
    phases: tuple[str, ...] = PHASE_NAMES
    only: tuple[str, ...] = ()
    """Run only these requirement ids (prefix match); empty runs all."""
    skip: tuple[str, ...] = ()
    """Leave out these requirement ids (prefix match)."""
    requirement_set: str = ""
    """The frozen requirement set scored (``--requirements``, ``<protocol>/<release>``,
    ``verdicts/sets.py``); empty: today's registry."""
    expected_failures: tuple[Entry, ...] = ()
    """The ``--expected-failures`` baseline's entries (``verdicts/baseline.py``)."""
    target_name: str = ""
    target_version: str = ""
    """The implementation under test, as the vendor names it (reported, never interpreted)."""
    depth: str = "default"
    """The named campaign (``run/depth.py``) the sizes below came from, unless given explicitly."""
    model_sequences: int | None = None
    """Sequences of the model-based phase; None: ``depth.model_sequences(max_examples)``."""
    model_step_factor: int = 1
    shard: Shard = WHOLE
    """This runner's share of the work (``--shard K/N``, ``run/shards.py``)."""
    example_db: ExampleDb | None = None
    """Where Hypothesis keeps and replays examples (``--example-db``); None keeps nothing."""
    report_dir: Path | None = None
    """Where this run's reports go (``--report-dir``, one folder per protocol when several share
    it); None: the face's default (the CLI's ``reports/<protocol>-<timestamp>/``)."""
    sign_key: Path | None = None
    """An Ed25519 private key (PEM) whose signature of results.json's digest the reports carry
    (``--sign-key``, ``reporting/signature.py``); None: unsigned."""

    @property
    def sequences(self) -> int:
        """The model-based phase's sequences, as given or derived from ``max_examples``."""
        return self.model_sequences if self.model_sequences is not None else model_sequences(self.max_examples)
