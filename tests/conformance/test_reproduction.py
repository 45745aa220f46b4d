"""Every finding replays from a fresh state: for each fault of the mock's catalogue, each finding
that depends on earlier calls (two calls or more) is run as its ``sh`` script against a fresh mock
with the fault (it must say reproduced), and by ``conformance replay`` against a fresh mock without
it (it must say not reproduced). Every finding of every fault is filed (operation, curl line)
under its deciding call, the answer its failure named when it named one (``Finding.shown_by``).
A finding whose recorded answers showed state its calls did not make (or whose deciding answer
the report kept only in part) may say inconclusive instead, never the opposite verdict; one that
sends ids of the old run, replayed against a mock that lost them (a fresh one), must never say not
reproduced, and says inconclusive when the old id is gone.

Bounded for CI: each fault's findings are read from the session's fault runs (tests/faultruns.py,
``replayed``: the schema phase's from the whole run the selfcheck judges, the later phases' from a
run of its own requirements, where they meet fewer objects other phases made), checked in worker
processes (as many as there are cores, up to 4), their scripts and replays side by side in
threads, each against a mock of its own (a script mostly waits: on curl, and on the pauses the
recorded run left between calls); every call of a script is bounded by ``MAX_TIME``, every script by 120 s."""

from __future__ import annotations

import multiprocessing
import os
import shutil
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import pytest

from conformance.check.credentials import Credentials
from conformance.check.script import script, undecidable
from conformance.engine.parallel import hash_seed_pinned
from conformance.evidence.replay import INCONCLUSIVE, NOT_REPRODUCED, replay
from conformance.verdicts.findings import operation_of
from conformance.verdicts.reproduction import Reproduction, sent_at_once
from conformance.verdicts.results import Finding, RunResult
from mockserver import EmbeddedServer, Fault, MockConfig, catalogue
from specs.documents import PROTOCOLS, load
from tests.conformance.reproducing import TOKENS, add, breaking, run_script
from tests.faultruns import FaultRuns, reads, replayed

FAULTS = catalogue()
WORKERS = max(1, min(4, os.cpu_count() or 1))
"""Faults checked at once, each in a process of its own."""
THREADS = 4
"""Findings of one fault checked at once (each against mocks of its own)."""
GIVEN = Credentials(TOKENS)
pytestmark = pytest.mark.skipif(shutil.which("curl") is None, reason="curl is not installed")


@dataclass
class Checked:
    replayed: int = 0
    """Findings that depend on earlier calls, reproduced by their script and not by a fixed server."""
    undecidable: int = 0
    """Findings whose replay may not be able to tell (inconclusive allowed), races apart."""
    races: int = 0
    """Findings of requests sent at the same moment: a script or a replay sends them one after
    another, so neither can ever tell (inconclusive allowed, never reproduced by a fixed server)."""
    old_ids: int = 0
    """Findings sending ids of the recorded run, replayed against a mock that never held them."""
    gone: int = 0
    """Of those, the ones replay called inconclusive (an old id answered 404)."""
    named: int = 0
    """Findings whose failure named the answer that shows it (``Finding.shown_by``)."""
    problems: list[str] = field(default_factory=list)


def _replayed(report: dict[str, Any], key: str, base_url: str) -> tuple[str, str]:
    (again,) = replay(report, keys=[key], base_url=base_url, credentials=GIVEN)
    return again.verdict, again.detail


def _one(fault: Fault, report: dict[str, Any], finding: Finding, state_dependent: bool, base: str) -> Checked:
    """One finding: its script against a fresh faulty mock, replay against a fresh clean one."""
    out = Checked()
    rep = Reproduction.of(finding, state_dependent)
    where = f"{fault.name} {finding.key}"
    base_path = load(fault.protocol).info.base_path
    with EmbeddedServer(MockConfig(protocols=(fault.protocol,), faults=(fault.name,))) as faulty:
        url = faulty.url + base_path
        if rep.baked:  # old ids, against a mock that never held them: never "not reproduced"
            verdict, detail = _replayed(report, finding.key, url)
            if verdict == NOT_REPRODUCED:
                out.problems.append(f"{where}: sends old ids, and replay says not reproduced: {detail}")
            out.old_ids += 1
            out.gone += verdict == INCONCLUSIVE
            return out
        code, said = run_script(script(rep, finding.key, base), url)
    cannot_tell = undecidable(rep)
    if code != 0 and not (cannot_tell and code == 2):
        out.problems.append(f"{where}: the script did not reproduce it (exit {code}):\n{said}")
    with EmbeddedServer(MockConfig(protocols=(fault.protocol,))) as fixed:
        verdict, detail = _replayed(report, finding.key, fixed.url + base_path)
    allowed = {NOT_REPRODUCED, INCONCLUSIVE} if cannot_tell else {NOT_REPRODUCED}
    if verdict not in allowed:
        out.problems.append(f"{where}: replay against the mock without the fault says {verdict}: {detail}")
    race = sent_at_once(rep)
    out.races += race
    out.undecidable += cannot_tell and not race
    out.replayed += not cannot_tell
    return out


def check_fault(name: str, report: dict[str, Any], phases: frozenset[str]) -> Checked:
    """One fault's run (its results.json), the findings of ``phases``: each filed under its deciding
    call, then each with two calls or more reproduced."""
    fault = FAULTS[name]
    result = RunResult.from_dict(report)
    results = [res for res in result.results if res.requirement.phase in phases]
    chosen = [
        (finding, bool(res.requirement.depends_on_state))
        for res in results
        for finding in res.findings
        if len(finding.evidence) >= 2  # one call: nothing before it to replay
    ]
    out = Checked()
    spec = load(fault.protocol)
    for res in results:  # every finding is filed under the answer that shows it
        for finding in res.findings:
            deciding = finding.deciding
            called = operation_of(spec, result.base_url, deciding.method, deciding.url) if deciding else ""
            if finding.key.rsplit("|", 1)[-1].startswith("ST"):
                continue  # a stateful case is filed under its transition's first call (schemathesis's case): not yet
            if deciding is not None and (finding.operation != called or finding.to_dict()["curl"] != deciding.curl):
                out.problems.append(f"{name} {finding.key}: filed under {finding.operation}, decided by {called}")
            if finding.shown_by:
                out.named += 1
                if finding.shown_by != finding.operation:
                    out.problems.append(f"{name} {finding.key}: shown by {finding.shown_by}, filed elsewhere")
    with ThreadPoolExecutor(THREADS) as pool:
        done = pool.map(lambda c: _one(fault, report, c[0], c[1], result.base_url), chosen)
        for one in done:
            add(out, one)
    return out


@pytest.mark.slow
@pytest.mark.timeout(2400)
@pytest.mark.parametrize(
    "pid", [reads(p, *(k for n in breaking(p) for k, _ in replayed(n))) for p in sorted(PROTOCOLS)]
)
def test_every_finding_that_depends_on_state_replays_from_a_fresh_state(pid: str, fault_runs: FaultRuns) -> None:
    pool = ProcessPoolExecutor(WORKERS, mp_context=multiprocessing.get_context("spawn"))
    runs = [(name, key, phases) for name in breaking(pid) for key, phases in replayed(name)]
    with hash_seed_pinned():
        futures = [pool.submit(check_fault, name, fault_runs.get(key).report, phases) for name, key, phases in runs]
    try:
        checked = [f.result() for f in futures]
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
    problems = [p for c in checked for p in c.problems]
    assert problems == [], "\n".join(problems)
    # the failures name the answers that show them (CheckFailed.shown_by), not only the last call
    assert sum(c.named for c in checked) > 0, f"{pid}: no finding names the answer that shows it"
    replays = sum(c.replayed for c in checked)
    assert replays >= 5, f"{pid}: only {replays} findings depend on earlier calls"  # the test tested something
    # the reproductions decide, rather than leave it open: most can tell a fixed server from a broken one
    # (a race's findings never can, whatever the server: they are counted apart)
    undecided, races = sum(c.undecidable for c in checked), sum(c.races for c in checked)
    assert undecided <= replays, f"{pid}: {undecided} findings cannot tell, {replays} can ({races} races apart)"
