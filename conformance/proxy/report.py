"""The observer's tally as the suite's results model, so every report writer applies unchanged.

Status mapping: exercised and never broken -> passed; broken by some exchange -> failed; never
exercised -> not verified, with a message starting "not observed" (a proxy never passes what it did
not see).
"""

from __future__ import annotations

import time
from datetime import UTC, datetime
from pathlib import Path

from conformance import __version__

from ..check.credentials import Credentials, redact_result
from ..reporting import write_reports
from ..verdicts import baseline
from ..verdicts.results import RequirementResult, RunResult, Status, settle
from .observer import Observer, Tally


def _result(tally: Tally, judged: bool) -> RequirementResult:
    if tally.broken:
        message = f"broken in {tally.broken} of {tally.exercised} observed exchanges; first: {tally.first_reason}"
        return RequirementResult(
            tally.requirement,
            Status.FAILED,
            message,
            list(tally.failing),
            cases=tally.exercised,
            findings=tally.findings.ordered(),
        )
    if tally.exercised:
        evidence = [tally.holding] if tally.holding else []
        message = f"held in {tally.exercised} observed exchanges"
        return RequirementResult(tally.requirement, Status.PASSED, message, evidence, cases=tally.exercised)
    why = (
        "no exchange through the proxy exercised it"
        if judged
        else "the proxy cannot judge it from traffic alone (`conformance run` decides it)"
    )
    return RequirementResult(tally.requirement, Status.NOT_VERIFIED, f"not observed: {why}")


def run_result(observer: Observer) -> RunResult:
    result = RunResult(
        protocol=observer.protocol_id,
        target=f"proxy to {observer.upstream}",
        suite_version=__version__,
        seed=0,
        level=observer.selection.level,
        started_at=observer.started_at,
        finished_at=datetime.now(UTC).isoformat(timespec="seconds"),
        duration_s=time.monotonic() - observer.started,
    )
    # the tokens the proxy was given are named in its reports (${TOKEN}, ${SECOND_TOKEN}), never written
    credentials = Credentials.of(*(*observer.tokens, None, None)[:2])
    result.results = [
        settle(redact_result(_result(observer.tallies[r.id], r.id in observer.judged), credentials))
        for r in observer.requirements
    ]
    selection = observer.selection
    for res in result.results:
        baseline.judge(res, selection.expected_failures)
    result.observed_only = selection.client_mode
    result.stats = {
        "mode": "proxy (client mode: observed violations decide)" if selection.client_mode else "proxy",
        "exchanges": observer.exchanges,
        "violations": observer.violations,
        "observed": sorted(rid for rid, t in observer.tallies.items() if t.exercised),
    }
    return result


def write(observer: Observer, directory: Path) -> RunResult:
    """The reports, and the HAR export when one was asked for (both as of now)."""
    result = run_result(observer)
    write_reports(result, directory)
    if observer.recorder is not None:
        observer.recorder.write()
    return result
