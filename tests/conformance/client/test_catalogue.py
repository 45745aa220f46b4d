"""Every client requirement a scenario decides fails against the broken client that breaks it and
passes for the fair variant; a client that hangs, floods or exits at once ends within its bound
with a verdict (the broken-client catalogue, conformance/client/examples/catalogue.py)."""

from __future__ import annotations

import pytest

from conformance.client.examples.catalogue import BROKEN, CLIENTS, MISBEHAVING, BrokenClient
from conformance.client.play import play
from conformance.client.scenarios import Scenario, scenarios
from conformance.verdicts.results import Status

TIMEOUT_S = 8.0
"""Each play's bound: the fair clients finish in about 2 s, the flood is cut here."""


def _scenario(protocol: str, name: str) -> Scenario:
    return next(s for s in scenarios(protocol) if s.name == name)


@pytest.mark.parametrize("protocol", sorted(CLIENTS))
def test_every_decided_requirement_has_a_broken_client(protocol: str) -> None:
    decided = {rid for s in scenarios(protocol) for rid in s.requirement_ids}
    broken = {rid for b in BROKEN if b.protocol == protocol for rid in b.breaks}
    assert decided <= broken, f"no broken client shows {sorted(decided - broken)} failing"


@pytest.mark.parametrize(
    "scenario", [s for p in sorted(CLIENTS) for s in scenarios(p)], ids=lambda s: f"{s.protocol}:{s.name}"
)
def test_the_fair_client_passes_every_requirement(scenario: Scenario) -> None:
    fair = BrokenClient(scenario.protocol, scenario.name, (), (), "fair")
    played, verdicts = play(scenario, fair.command(), TIMEOUT_S)
    assert played.exit_code == (0 if scenario.outcome == "succeed" else 1), played.output
    assert set(verdicts) == set(scenario.requirement_ids)
    for rid, verdict in verdicts.items():
        assert verdict.status is Status.PASSED, f"{rid}: {verdict.message}"


@pytest.mark.parametrize("client", BROKEN, ids=lambda b: b.name)
def test_the_broken_client_fails_what_it_breaks(client: BrokenClient) -> None:
    _, verdicts = play(_scenario(client.protocol, client.scenario), client.command(), TIMEOUT_S)
    for rid in client.breaks:
        assert verdicts[rid].status is Status.FAILED, f"{rid}: {verdicts[rid].message}"
        assert verdicts[rid].message
    for rid in set(verdicts) - set(client.breaks):  # one break, not a cascade of failures
        assert verdicts[rid].status is not Status.FAILED, f"{rid}: {verdicts[rid].message}"


@pytest.mark.parametrize("client", MISBEHAVING, ids=lambda b: b.name)
def test_a_misbehaving_client_ends_within_its_bound_with_a_verdict(client: BrokenClient) -> None:
    bound = 3.0
    played, verdicts = play(_scenario(client.protocol, client.scenario), client.command(), bound)
    assert played.duration_s < bound + 2.5  # the bound, and the kill's grace
    for rid in client.breaks:
        assert verdicts[rid].status is Status.FAILED
        assert played.ended in verdicts[rid].message
    if "--hang" in client.flags:
        assert played.exit_code is None and "did not finish within 3 s (killed)" in played.ended
    else:
        assert played.exit_code == 0 and not played.exchanges
        assert verdicts[f"{client.breaks[0].split('-')[0]}-CLIENT-001"].status is Status.NOT_VERIFIED
