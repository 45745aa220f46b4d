"""Real clients judged by the ``client`` command through a driver: each verdict equals the one
checked by hand in docs/client.md ("Real clients judged")."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from conformance.client.play import play
from conformance.client.scenarios import scenarios
from conformance.verdicts.results import Status

pytestmark = pytest.mark.interop

DRIVER = Path(__file__).with_name("openai_client_mode_driver.py")
PASSED, FAILED = Status.PASSED, Status.FAILED

# hand-checked against openai 2.x: its Stream ends its loop at [DONE] or at the end of the
# response, raising nothing either way (openai/_streaming.py), so a cut stream reads as complete;
# it waits the Retry-After a 429 names (up to 60 s) before retrying (openai/_base_client.py)
OPENAI = {
    "clarification": {"SGR-CLIENT-001": PASSED, "SGR-CLIENT-010": PASSED},
    "cut-stream": {"SGR-CLIENT-001": PASSED, "SGR-CLIENT-006": FAILED},
    "retry-after": {"SGR-CLIENT-001": PASSED, "SGR-CLIENT-002": PASSED},
    "unknown-fields": {"SGR-CLIENT-001": PASSED, "SGR-CLIENT-004": PASSED},
}


@pytest.mark.parametrize("name", sorted(OPENAI))
def test_openai_client_verdicts_are_the_hand_checked_ones(name: str) -> None:
    pytest.importorskip("openai", reason="the openai client package is not installed")
    scenario = next(s for s in scenarios("sgr-agent-core") if s.name == name)
    played, verdicts = play(scenario, [sys.executable, str(DRIVER)], 30.0)
    assert {rid: v.status for rid, v in verdicts.items()} == OPENAI[name], played.output
