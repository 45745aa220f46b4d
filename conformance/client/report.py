"""Scenario verdicts as the suite's results model, so every report writer applies unchanged.

A requirement several scenarios decide fails when any failed it, passes when one passed it and
none failed it, and is otherwise not verified; its message names each scenario's say.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

from conformance import __version__

from ..verdicts.requirements import Level
from ..verdicts.results import RequirementResult, RunResult, Status, settle
from .judges import Judged, Play
from .requirements import client_requirements


def run_result(
    protocol: str,
    command: Sequence[str],
    plays: Sequence[tuple[Play, dict[str, Judged]]],
    started_at: str,
    duration_s: float,
    seed: int,
) -> RunResult:
    result = RunResult(
        protocol=protocol,
        target="client: " + " ".join(command),
        suite_version=__version__,
        seed=seed,
        level=Level.MAY,
        started_at=started_at,
        finished_at=datetime.now(UTC).isoformat(timespec="seconds"),
        duration_s=duration_s,
    )
    for requirement in client_requirements(protocol):
        said = [(p, v) for p, v in ((p, v.get(requirement.id)) for p, v in plays) if v is not None]
        if not said:
            continue  # no scenario played decides it: it is not part of this run
        statuses = {v.status for _, v in said}
        status = (
            Status.FAILED
            if Status.FAILED in statuses
            else Status.PASSED
            if Status.PASSED in statuses
            else Status.NOT_VERIFIED
        )
        shown = [(name, v) for name, v in said if v.status is status] or said
        message = "; ".join(f"{p.scenario}: {v.message}" for p, v in shown)
        evidence = [seen.evidence(p.origin) for p, v in shown for seen in v.evidence][:5]
        result.results.append(settle(RequirementResult(requirement, status, message, evidence)))
    result.stats = {
        "mode": "client",
        "scenarios": [
            {
                "name": p.scenario,
                "exit_code": p.exit_code,
                "ended": p.ended,
                "seconds": round(p.duration_s, 3),
                "exchanges": len(p.exchanges),
                "verdicts": {rid: v.status.value for rid, v in verdicts.items()},
                "output": p.output[-500:],
            }
            for p, verdicts in plays
        ],
    }
    return result
