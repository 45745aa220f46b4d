"""The suite proves itself: run it against the mock with each named fault and check it notices.

A fault is caught when every requirement it claims to break is reported failed, and the run's
exit code is 1 whenever one of those is a MUST. ``python -m conformance selfcheck`` runs the
whole catalogue (or one protocol's) and writes ``catalogue.md`` and ``catalogue.json``.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .context import RunOptions
from .requirements import Level
from .results import RunResult, Status
from .runner import EMBEDDED_TOKENS, run
from .specs import load

if TYPE_CHECKING:  # mockserver is imported lazily: a vendor's run never needs it
    from mockserver.faults import Fault


def fault_options(fault: Fault, base_url: str, *, seed: int = 0, timeout: float = 8.0) -> RunOptions:
    """Only the broken requirements and only their phases, so one fault takes seconds."""
    from .protocols import suite

    wanted = {c.requirement.phase for c in suite(fault.protocol).registry if c.requirement.id in fault.breaks}
    phases = tuple(phase for phase in ("schema", "model", "scenario") if phase in wanted)
    return RunOptions(
        protocol=fault.protocol,
        base_url=base_url,
        token=EMBEDDED_TOKENS[0],
        second_token=EMBEDDED_TOKENS[1],
        seed=seed,
        max_examples=5,
        timeout=timeout,
        only=fault.breaks,
        phases=phases,
        budget_s=120.0,
    )


def run_fault(fault: Fault, *, seed: int = 0, timeout: float = 8.0) -> RunResult:
    from mockserver import EmbeddedServer, MockConfig

    base_path = load(fault.protocol).info.base_path
    with EmbeddedServer(MockConfig(protocols=(fault.protocol,), faults=(fault.name,))) as server:
        return run(fault_options(fault, server.url + base_path, seed=seed, timeout=timeout))


@dataclass(frozen=True, slots=True)
class Outcome:
    fault: str
    protocol: str
    breaks: tuple[str, ...]
    missed: tuple[str, ...]
    """Requirements the fault breaks that the run did not report failed, with their status."""
    exit_code: int
    seconds: float

    @property
    def caught(self) -> bool:
        return not self.missed

    def to_dict(self) -> dict[str, Any]:
        return {
            "fault": self.fault,
            "protocol": self.protocol,
            "breaks": list(self.breaks),
            "caught": self.caught,
            "missed": list(self.missed),
            "exit_code": self.exit_code,
            "seconds": round(self.seconds, 2),
        }


def judge(fault: Fault, result: RunResult, seconds: float) -> Outcome:
    statuses = {r.requirement.id: r for r in result.results}
    missed = [
        f"{rid} ({statuses[rid].status.value if rid in statuses else 'not run'})"
        for rid in fault.breaks
        if rid not in statuses or statuses[rid].status is not Status.FAILED
    ]
    must = any(rid in statuses and statuses[rid].requirement.level is Level.MUST for rid in fault.breaks)
    if must and result.exit_code != 1:
        missed.append(f"exit code {result.exit_code}, expected 1")
    return Outcome(fault.name, fault.protocol, fault.breaks, tuple(missed), result.exit_code, seconds)


def check_fault(fault: Fault) -> Outcome:
    """Hanging faults get a short client timeout so their runs stay short; the rest a roomy one,
    so a loaded machine cannot turn a slow answer into a false catch."""
    started = time.monotonic()
    result = run_fault(fault, timeout=2.0 if fault.hangs else 8.0)
    return judge(fault, result, time.monotonic() - started)


def run_catalogue(faults: Iterable[Fault], progress: Callable[[str], None] = lambda _: None) -> list[Outcome]:
    outcomes = []
    for fault in faults:
        outcome = check_fault(fault)
        progress(f"{fault.name}: {'caught' if outcome.caught else 'MISSED ' + ', '.join(outcome.missed)}")
        outcomes.append(outcome)
    return outcomes


def render_catalogue(outcomes: list[Outcome]) -> str:
    lines = ["| protocol | faults | caught |", "|---|---|---|"]
    for protocol in sorted({o.protocol for o in outcomes}):
        mine = [o for o in outcomes if o.protocol == protocol]
        lines.append(f"| {protocol} | {len(mine)} | {sum(o.caught for o in mine)} |")
    total = sum(o.caught for o in outcomes)
    lines.append(f"| **all** | {len(outcomes)} | {total} |")
    lines += ["", "| fault | breaks | result |", "|---|---|---|"]
    for o in outcomes:
        verdict = "caught" if o.caught else "**missed**: " + ", ".join(o.missed)
        lines.append(f"| `{o.fault}` | {', '.join(o.breaks)} | {verdict} |")
    return "\n".join(lines) + "\n"


def write_catalogue(outcomes: list[Outcome], directory: Path) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "catalogue.md").write_text("# Broken-server catalogue\n\n" + render_catalogue(outcomes), "utf-8")
    payload = {
        "faults": len(outcomes),
        "caught": sum(o.caught for o in outcomes),
        "outcomes": [o.to_dict() for o in outcomes],
    }
    (directory / "catalogue.json").write_text(json.dumps(payload, indent=2) + "\n", "utf-8")
