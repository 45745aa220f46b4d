"""Every client requirement a scenario decides fails against the broken client that breaks it and
passes for the fair variant; a client that hangs, floods or exits at once ends within its bound
with a verdict (the broken-client catalogue, conformance/client/examples/catalogue.py, proved by
conformance/client/selfcheck.py as ``selfcheck --clients`` proves it)."""

from __future__ import annotations

import pytest

from conformance.cli.commands import main
from conformance.client.examples.catalogue import BROKEN, CLIENTS, MISBEHAVING, BrokenClient
from conformance.client.play import play
from conformance.client.scenarios import Scenario, scenarios
from conformance.client.selfcheck import check_broken, check_fair
from conformance.verdicts.results import Status


@pytest.mark.parametrize("protocol", sorted(CLIENTS))
def test_every_decided_requirement_has_a_broken_client(protocol: str) -> None:
    decided = {rid for s in scenarios(protocol) for rid in s.requirement_ids}
    broken = {rid for b in BROKEN if b.protocol == protocol for rid in b.breaks}
    assert decided <= broken, f"no broken client shows {sorted(decided - broken)} failing"


@pytest.mark.parametrize(
    "scenario", [s for p in sorted(CLIENTS) for s in scenarios(p)], ids=lambda s: f"{s.protocol}:{s.name}"
)
def test_the_fair_client_passes_every_requirement(scenario: Scenario) -> None:
    outcome = check_fair(scenario.protocol, scenario.name)
    assert outcome.caught, outcome.detail


SELFCHECKED = "neuro-san"
"""The protocol whose catalogue ``test_selfcheck_clients_proves_a_protocols_catalogue`` proves whole
through the command (``check_fair`` and ``check_broken`` for each of its clients, as below)."""


@pytest.mark.parametrize(
    "client",
    # a client that floods the mock runs until its scenario's bound (8 s of a busy core): the slow
    # profile proves the selfchecked protocol's through the command alone, not twice
    [
        pytest.param(b, marks=pytest.mark.slow) if b.name.endswith(":flood") else b
        for b in BROKEN
        if not (b.name.endswith(":flood") and b.protocol == SELFCHECKED)
    ],
    ids=lambda b: b.name,
)
def test_the_broken_client_fails_what_it_breaks_and_nothing_else(client: BrokenClient) -> None:
    outcome = check_broken(client)
    assert outcome.caught, outcome.detail


@pytest.mark.parametrize("client", MISBEHAVING, ids=lambda b: b.name)
def test_a_misbehaving_client_ends_within_its_bound_with_a_verdict(client: BrokenClient) -> None:
    bound = 3.0
    played, verdicts = play(
        next(s for s in scenarios(client.protocol) if s.name == client.scenario), client.command(), bound
    )
    assert played.duration_s < bound + 2.5  # the bound, and the kill's grace
    for rid in client.breaks:
        assert verdicts[rid].status is Status.FAILED
        assert played.ended in verdicts[rid].message
    if "--hang" in client.flags:
        assert played.exit_code is None and "did not finish within 3 s (killed)" in played.ended
    else:
        assert played.exit_code == 0 and not played.exchanges
        assert verdicts["AP-CLIENT-001"].status is Status.NOT_VERIFIED


@pytest.mark.slow  # every scenario of a protocol, each a mock and a client process
def test_selfcheck_clients_proves_a_protocols_catalogue(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["selfcheck", "--clients", "--protocol", SELFCHECKED])
    captured = capsys.readouterr()
    assert code == 0, captured.err  # each client's line: the one not caught says why
    # a fair client per scenario, then the broken and the misbehaving ones
    ns = SELFCHECKED
    broken = len(scenarios(ns)) + sum(1 for b in (*BROKEN, *MISBEHAVING) if b.protocol == ns)
    assert f"selfcheck --clients: {broken} of {broken} broken clients caught and fair clients passed" in captured.out
    assert "ok     neuro-san:cut-stream:take-cut-as-complete (prints the last text it saw)" in captured.err
    assert "ok     neuro-san:busy:flood (" in captured.err  # left out of the broken clients' test above
