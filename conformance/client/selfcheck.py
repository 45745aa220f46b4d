"""The broken-client catalogue proved: each broken client's requirements reported failed (and no
other), each fair client passing every requirement of every scenario, as ``selfcheck`` proves the
suite against the mock's faults (``selfcheck --clients``)."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from ..verdicts.results import Status
from .examples.catalogue import BROKEN, CLIENTS, MISBEHAVING, BrokenClient
from .play import play
from .scenarios import GIVE_UP, Scenario, scenarios

TIMEOUT_S = 8.0
"""Each play's bound: a fair client takes about 2 s, a flood is cut here."""
MISBEHAVING_TIMEOUT_S = 3.0


@dataclass(frozen=True, slots=True)
class Outcome:
    client: BrokenClient
    caught: bool
    detail: str


def _scenario(protocol: str, name: str) -> Scenario:
    return next(s for s in scenarios(protocol) if s.name == name)


def check_broken(client: BrokenClient, timeout_s: float = TIMEOUT_S) -> Outcome:
    played, verdicts = play(_scenario(client.protocol, client.scenario), client.command(sys.executable), timeout_s)
    missed = [rid for rid in client.breaks if verdicts[rid].status is not Status.FAILED]
    extra = [rid for rid, v in verdicts.items() if v.status is Status.FAILED and rid not in client.breaks]
    said = "; ".join(f"{rid} {v.status.value}: {v.message}" for rid, v in verdicts.items())
    if missed or extra:
        why = f"missed {missed}" if missed else f"also failed {extra}"
        return Outcome(client, False, f"{why} ({played.ended}); {said}")
    return Outcome(client, True, said)


def check_fair(protocol: str, name: str, timeout_s: float = TIMEOUT_S) -> Outcome:
    scenario = _scenario(protocol, name)
    fair = BrokenClient(protocol, name, (), (), "the fair variant")
    played, verdicts = play(scenario, fair.command(sys.executable), timeout_s)
    expected = 1 if scenario.outcome == GIVE_UP else 0
    wrong = [rid for rid, v in verdicts.items() if v.status is not Status.PASSED]
    said = "; ".join(f"{rid} {v.status.value}: {v.message}" for rid, v in verdicts.items())
    if wrong or played.exit_code != expected:
        return Outcome(fair, False, f"not passed: {wrong} ({played.ended}, expected exit {expected}); {said}")
    return Outcome(fair, True, said)


def run_catalogue(protocols: Iterable[str], line: Callable[[str], None]) -> list[Outcome]:
    chosen = [p for p in protocols if p in CLIENTS]
    outcomes = []
    for protocol in chosen:
        for scenario in scenarios(protocol):
            outcomes.append(check_fair(protocol, scenario.name))
            line(_line(outcomes[-1]))
    for client in BROKEN:
        if client.protocol in chosen:
            outcomes.append(check_broken(client))
            line(_line(outcomes[-1]))
    for client in MISBEHAVING:
        if client.protocol in chosen:
            outcomes.append(check_broken(client, MISBEHAVING_TIMEOUT_S))
            line(_line(outcomes[-1]))
    return outcomes


def _line(outcome: Outcome) -> str:
    head = "ok    " if outcome.caught else "MISSED"
    what = outcome.client.description if outcome.client.flags else "fair"
    return f"{head} {outcome.client.name} ({what})" + ("" if outcome.caught else f": {outcome.detail[:400]}")
