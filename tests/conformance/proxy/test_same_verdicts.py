"""The active run and the proxy, given the run's own traffic, reach the same verdict (issue 32).

For every requirement the proxy can judge (``from_traffic``): on the clean mock, and on every
catalogue fault declared to break it. The traffic is the session's whole run of each (the mock
kept every exchange whole, tests/faultruns.py), fed to the proxy's judge in this process
(``conformance.proxy.recorded``) in the order the mock answered it. A requirement the run left
blocked or not verified is not compared (the proxy has no blocking: it judges what it saw).
"""

from __future__ import annotations

import pytest

from conformance.engine.runner import EMBEDDED_TOKENS
from conformance.proxy.recorded import judged
from conformance.run.suites import suite
from conformance.verdicts.results import RunResult, Status
from mockserver import catalogue
from specs.documents import load, protocol
from tests.faultruns import CLEAN, FaultRuns, reads

FAULTS = catalogue()
PROTOCOLS = ("agent-protocol", "neuro-san", "sgr-agent-core", "synapse-agent")
DECIDED = {Status.PASSED: "passed", Status.FAILED: "failed", Status.ADVICE: "failed"}
"""A verdict as compared: advice is a practice requirement's failure."""


def judged_by_traffic(pid: str) -> set[str]:
    return {c.requirement.id for c in suite(pid).registry if c.requirement.from_traffic}


def caught(pid: str) -> list[str]:
    """The faults of ``pid`` declared to break a requirement the proxy judges."""
    mine = judged_by_traffic(pid)
    return sorted(f.name for f in FAULTS.values() if f.protocol == pid and set(f.breaks + f.advises) & mine)


KNOWN: dict[tuple[str, str], str] = {
    ("ns-stream-stall", "NS-STREAM-001"): "a stall is time, not bytes: the mock's record of a stream its client "
    "left mid-way has no status (the mock saw its answer end only by the client leaving), so the recorded "
    "traffic cannot show the stall the live proxy times out on",
    ("sgr-stall-mid-stream", "SGR-STREAM-007"): "a stall is time, not bytes: the run's client waited its bound "
    "and left; a live proxy between them fails it only when its own bound is the shorter (it cuts the stream "
    "first) and judges no end when the client's is (the client leaves first: forward.client_gone); the mock's "
    "journal marks a stream its client left (Entry.client_left), so the recorded judge is the second case. "
    "Recording the silence before the client left would make the first a tie between equal bounds, not a fact of "
    "the traffic",
}
"""(run, requirement) pairs the two judge apart, each with why: what the recorded traffic cannot
carry, not a rule written twice (those were made one; see the commit that added this test)."""


def _verdicts(result: RunResult) -> dict[str, str]:
    return {r.requirement.id: DECIDED.get(r.status, r.status.value) for r in result.results}


def disagreements(key: str, pid: str, runs: FaultRuns, compared: set[str]) -> dict[tuple[str, str], str]:
    active = runs.get(key).result
    tokens = EMBEDDED_TOKENS if protocol(pid).realm else ()
    origin = active.base_url.removesuffix(load(pid).info.base_path)
    proxy = judged(pid, origin, runs.traffic(key), tokens=tokens, settle_s=8.0)
    run, seen = _verdicts(active), _verdicts(proxy)
    out = {}
    for rid in sorted(compared):
        if run.get(rid) in ("passed", "failed") and seen.get(rid) != run[rid]:
            message = next(r.message for r in proxy.results if r.requirement.id == rid)
            out[key, rid] = f"run {run[rid]}, proxy {seen.get(rid)}: {message[:300]}"
    return out


@pytest.mark.parametrize("pid", [reads(p, CLEAN + p) for p in PROTOCOLS])
def test_on_the_clean_mock(pid: str, fault_runs: FaultRuns) -> None:
    found = disagreements(CLEAN + pid, pid, fault_runs, judged_by_traffic(pid))
    unexpected = {k: v for k, v in found.items() if k not in KNOWN}
    assert not unexpected, "\n".join(f"{k}: {v}" for k, v in unexpected.items())
    assert not {k for k in KNOWN if k[0] == CLEAN + pid} - set(found), "a known disagreement is gone: drop it"


@pytest.mark.slow  # the judging of every such fault's whole traffic
@pytest.mark.parametrize("name", [reads(n, n) for p in PROTOCOLS for n in caught(p)])
def test_on_each_fault_that_breaks_it(name: str, fault_runs: FaultRuns) -> None:
    fault = FAULTS[name]
    declared = set(fault.breaks + fault.advises) & judged_by_traffic(fault.protocol)
    found = disagreements(name, fault.protocol, fault_runs, declared)
    unexpected = {k: v for k, v in found.items() if k not in KNOWN}
    assert not unexpected, "\n".join(f"{k}: {v}" for k, v in unexpected.items())
    assert not {k for k in KNOWN if k[0] == name} - set(found), "a known disagreement is gone: drop it"
