"""Each passive check fails on a violating upstream: the mock's fault catalogue behind the proxy.

Per protocol, the same ordinary traffic (traffic.py) goes through the proxy to the unmodified mock
(everything it exercises holds, but the one invalid request the client sends on purpose) and to
the mock with each fault that breaks a requirement the proxy judges: the proxy must report a
broken requirement of every such fault, and every requirement it judges must be reported broken
by some fault.
"""

from __future__ import annotations

import pytest

from conformance.proxy.observer import Observer
from mockserver import catalogue

from .conftest import proxied
from .traffic import TOKENS, TRAFFIC

PROTOCOLS = sorted(TRAFFIC)


def judged(pid: str) -> set[str]:
    return Observer(pid, "http://127.0.0.1:9").judged


@pytest.mark.parametrize("pid", PROTOCOLS)
def test_ordinary_traffic_to_the_mock_holds(pid: str) -> None:
    with proxied(pid, tokens=TOKENS.get(pid, ())) as p:
        TRAFFIC[pid](p.base)
    failed = p.failed()
    client = p.proxy.observer.document.client_id
    assert set(failed) == {client}, failed
    assert "#" in failed[client] and failed[client].count("broken in 1 of") == 1
    assert judged(pid) - p.passed() - {client} == set(), "judged requirements the traffic did not exercise"


@pytest.mark.slow  # a run through the proxy per fault
@pytest.mark.parametrize("pid", PROTOCOLS)
def test_every_fault_the_proxy_can_see_is_reported(pid: str) -> None:
    mine = judged(pid)
    # a fault shown only by hostile bodies (``Fault.hostile``: a null body run as an empty one) needs
    # traffic no ordinary client sends; the run's own traffic shows the proxy judging it
    # (proxy/test_same_verdicts.py)
    faults = [
        f for f in catalogue().values() if f.protocol == pid and set(f.breaks + f.advises) & mine and f.hostile is None
    ]
    missed: dict[str, tuple[str, ...]] = {}
    caught: set[str] = set()
    for fault in faults:
        # a short upstream timeout only where the fault hangs (its verdict is that timeout): under
        # load an ordinary answer can take a second, and the proxy then judged a timeout, not it
        with proxied(pid, fault.name, timeout=1.0 if fault.hangs else 10.0, tokens=TOKENS.get(pid, ())) as p:
            TRAFFIC[pid](p.base)
        failed = set(p.failed()) | p.advised()  # a practice requirement a fault breaks is advice
        hit = failed & set(fault.breaks + fault.advises)
        caught |= hit
        if not hit:
            missed[fault.name] = fault.breaks + fault.advises
    assert not missed, f"faults the proxy did not report: {missed}"
    # The requirement on the client's own requests is broken by the traffic itself (see above).
    uncovered = {rid for rid in mine - caught if "-CLIENT-" not in rid}
    assert not uncovered, f"judged requirements no fault showed broken: {sorted(uncovered)}"
