"""Replay and the scripts judge a finding's deciding answer again, so a bug that is still there
reproduces after other clients added items to the lists concerned between the record and the
replay (issue 32: a task list one item longer made a page-arithmetic finding "inconclusive").

For a fault's run (``check_grown`` takes its ``RunResult``: the fault runs may be shared), each
finding that depends on earlier calls is run as its ``sh`` script (the kit installed: it calls
``agent-conformance judge``) against a fresh mock with the fault, and replayed against a fresh
mock without it, each after other clients grew the lists (``GROW``). A finding a judgment decided
(``Finding.judgment``) must say reproduced against the faulty mock and never reproduced against
the clean one (inconclusive only where test_reproduction allows it: a reproduction whose recorded
calls met state they did not make). One whose check names no re-runnable judgment yet is compared
with the recording: it may say inconclusive (counted: what is left to move onto judgments), and
never not reproduced against the faulty mock, but for the model-based phase's (``model_missed``)."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest

from conformance.check.credentials import Credentials
from conformance.check.http import tls_context
from conformance.check.script import script, undecidable
from conformance.engine.runner import EMBEDDED_TOKENS
from conformance.evidence.replay import INCONCLUSIVE, NOT_REPRODUCED, REPRODUCED, replay
from conformance.verdicts.reproduction import Reproduction
from conformance.verdicts.results import Finding, RunResult
from mockserver import EmbeddedServer, Fault, MockConfig, catalogue
from specs.documents import load
from tests.conformance.reproducing import TOKENS, add, breaking, run_script
from tests.faultruns import FaultRuns, reads, replayed

FAULTS = catalogue()
AUTH = {"Authorization": f"Bearer {EMBEDDED_TOKENS[0]}"}
ADDED = 3
"""Items other clients add to each list: an odd number, so a list the reproduction makes of an
even length does not become one a wrong rounding cannot show at (a total_pages rounded down shows
only when the last page is partly filled)."""
THREADS = 4
"""Faults checked at once (each finding against mocks of its own)."""
pytestmark = pytest.mark.skipif(shutil.which("curl") is None, reason="curl is not installed")


def _grow_tasks(url: str) -> None:
    with httpx.Client(headers=AUTH, verify=tls_context()) as http:  # one client: its TLS context costs 20 ms
        for n in range(ADDED):
            task = {"input": f"another client's task {n}"}
            http.post(f"{url}/ap/v1/agent/tasks", json=task).raise_for_status()


def _grow_agents(url: str) -> None:
    with httpx.Client(timeout=30, verify=tls_context()) as http:
        for n in range(ADDED):
            chat = {"model": "sgr_agent", "messages": [{"role": "user", "content": f"another client's chat {n}"}]}
            with http.stream("POST", f"{url}/v1/chat/completions", json={**chat, "stream": True}) as answer:
                answer.raise_for_status()
                for _ in answer.iter_raw():
                    pass


GROW: dict[str, Callable[[str], None]] = {"agent-protocol": _grow_tasks, "sgr-agent-core": _grow_agents}
"""Per protocol: other clients adding items to its shared lists (the lists a check makes under an
object of its own, a task's steps, no other client can reach): Agent Protocol's tasks, SGR's agents
(whose list SGR-AGENT-001 judges by ``lists.holds``). Neither NeuroSan nor Synapse names a
judgment of a shared list yet."""
WHOLE = ("agent-protocol",)
"""The protocols whose whole catalogue is replayed after the lists grew (SGR's: its list faults,
``LIST_FAULTS``, until the rest of its catalogue is measured)."""


@dataclass
class Grown:
    judged: int = 0
    """Findings replayed by their judgment after the lists grew."""
    unsure: int = 0
    """Of those, the ones whose script could not make a call before the deciding one as recorded."""
    compared: list[str] = field(default_factory=list)
    """Findings still compared with the recording (no re-runnable judgment yet)."""
    missed: list[str] = field(default_factory=list)
    """Of those, the ones whose script said not reproduced against the faulty grown mock: what the
    growth still breaks (the issue's wrong verdict), until their checks name a judgment."""
    model_missed: list[str] = field(default_factory=list)
    """The same, of the model-based phase, whose checks name no judgment yet (measured over the
    Agent Protocol catalogue: AP-MODEL-001 against ap-task-artifacts-stale and
    ap-task-list-cached-at-create, a task-list page compared whole)."""
    problems: list[str] = field(default_factory=list)


def _one(fault: Fault, report: dict[str, Any], finding: Finding, state_dependent: bool) -> Grown:
    out = Grown()
    grow = GROW[fault.protocol]
    rep = Reproduction.of(finding, state_dependent)
    where = f"{fault.name} {finding.key}"
    base_path = load(fault.protocol).info.base_path
    with EmbeddedServer(MockConfig(protocols=(fault.protocol,), faults=(fault.name,))) as faulty:
        grow(faulty.url + base_path)
        code, said = run_script(script(rep, finding.key, report["base_url"]), faulty.url + base_path, kit=True)
    with EmbeddedServer(MockConfig(protocols=(fault.protocol,))) as clean:
        grow(clean.url + base_path)
        (fixed,) = replay(report, keys=[finding.key], base_url=clean.url + base_path, credentials=Credentials(TOKENS))
    if not finding.judgment:
        out.compared.append(where)
        if code == 1:
            missed = out.model_missed if finding.kind.startswith("model:") else out.missed
            missed.append(f"{where}: {said.strip().splitlines()[-1] if said.strip() else ''}")
        if fixed.verdict == REPRODUCED:
            out.problems.append(f"{where}: compared, replay against the clean grown mock says so: {fixed.detail}")
        return out
    out.judged += 1
    # as in test_reproduction: a reproduction whose recorded calls met state they did not make may
    # not be able to make its setup calls as recorded (inconclusive, saying which), never the opposite
    cannot_tell = undecidable(rep)
    if code != 0 and not (cannot_tell and code == 2):
        out.problems.append(f"{where}: the script against the faulty grown mock exits {code}:\n{said}")
    if fixed.verdict not in ((NOT_REPRODUCED, INCONCLUSIVE) if cannot_tell else (NOT_REPRODUCED,)):
        out.problems.append(f"{where}: replay against the clean grown mock says {fixed.verdict}: {fixed.detail}")
    out.unsure += code != 0
    return out


def check_grown(fault: Fault, runs: FaultRuns) -> Grown:
    """One fault's runs (``replayed``): each finding with earlier calls, replayed after the lists grew."""
    out = Grown()
    for key, phases in replayed(fault.name):
        add(out, _grown(fault, runs.get(key).result, phases))
    return out


def _grown(fault: Fault, result: RunResult, phases: frozenset[str]) -> Grown:
    report = result.to_dict()
    out = Grown()
    for res in result.results:
        if res.requirement.phase not in phases:
            continue
        for finding in res.findings:
            if len(finding.evidence) < 2:
                continue  # one call: nothing before it to replay
            add(out, _one(fault, report, finding, bool(res.requirement.depends_on_state)))
    return out


LIST_FAULTS = ("sgr-list-drops-finished",)
"""SGR's agent list, judged by ``lists.holds`` (what the check made, by id, renamed on replay)."""


@pytest.mark.parametrize("name", [reads(n, *(k for k, _ in replayed(n))) for n in LIST_FAULTS])
def test_an_agent_list_finding_reproduces_after_other_clients_started_chats(name: str, fault_runs: FaultRuns) -> None:
    grown = check_grown(FAULTS[name], fault_runs)
    assert grown.problems == [], "\n".join(grown.problems)
    assert grown.judged - grown.unsure >= 1, f"{name}: {grown.judged - grown.unsure} findings judged again"


PAGE_FAULTS = ("ap-page-floor-total-pages", "ap-page-ignores-current-page")


@pytest.mark.parametrize("name", [reads(n, *(k for k, _ in replayed(n))) for n in PAGE_FAULTS])
def test_a_page_arithmetic_finding_reproduces_after_other_clients_added_tasks(name: str, fault_runs: FaultRuns) -> None:
    grown = check_grown(FAULTS[name], fault_runs)
    assert grown.problems == [], "\n".join(grown.problems)
    assert grown.judged - grown.unsure >= 2, f"{name}: {grown.judged - grown.unsure} findings judged again"


@pytest.mark.slow
@pytest.mark.timeout(2400)
@pytest.mark.parametrize("pid", [reads(p, *(k for n in breaking(p) for k, _ in replayed(n))) for p in WHOLE])
def test_every_judged_finding_reproduces_after_the_lists_grew(pid: str, fault_runs: FaultRuns) -> None:
    """Each fault's runs are the session's (the reproduction test's too); faults side by side in
    threads, each finding against mocks of its own (they mostly wait on sh and curl)."""
    with ThreadPoolExecutor(THREADS) as pool:
        checked = list(pool.map(lambda n: check_grown(FAULTS[n], fault_runs), breaking(pid)))
    problems = [p for c in checked for p in c.problems]
    # a compared finding that growth turns into "not reproduced" is the wrong verdict; the
    # model-based phase's (Grown.model_missed) are the known rest, until its checks name judgments
    problems += [m for c in checked for m in c.missed]
    assert problems == [], "\n".join(problems)
    if pid == "agent-protocol":  # the protocol whose checks name judgments today (the page arithmetic)
        assert sum(c.judged for c in checked) >= 5, f"{pid}: too few findings judged again"
