"""One scenario played: what the command is given, and the bound that ends it with its children."""

from __future__ import annotations

import os
import sys
import time

from conformance.client.play import play
from conformance.client.scenarios import scenarios
from conformance.verdicts.results import Status
from tests.timing import Clock, Deadline

ECHO = (
    "import os, sys; print(os.environ['CONFORMANCE_SCENARIO'], os.environ.get('CONFORMANCE_TOKEN'), "
    "os.environ['CONFORMANCE_SCENARIO_PROTOCOL']); "
    "sys.exit(0 if sys.argv[1] == os.environ['CONFORMANCE_BASE_URL'] else 3)"
)


def test_the_command_gets_the_base_url_with_the_server_path_the_scenario_and_the_tokens() -> None:
    revoked = next(s for s in scenarios("synapse-agent") if s.name == "revoked-token")
    played, verdicts = play(revoked, [sys.executable, "-c", ECHO, "{base_url}"], 10.0)
    assert played.exit_code == 0, played.output  # {base_url} replaced by CONFORMANCE_BASE_URL
    assert played.output == "revoked-token revoked-token synapse-agent"
    assert played.origin.startswith("http://127.0.0.1:")
    assert verdicts["SYN-CLIENT-001"].status is Status.NOT_VERIFIED  # it sent nothing
    assert "the client sent no request (the client exited 0)" in verdicts["SYN-CLIENT-001"].message


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    try:  # a zombie until init reaps it: gone once its state says so
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            return stat.read().split(") ", 1)[1].startswith("Z")
    except FileNotFoundError:
        return True


def test_the_bound_kills_the_command_and_the_children_it_started() -> None:
    pages = next(s for s in scenarios("agent-protocol") if s.name == "list-pages")
    clock = Clock()
    played, verdicts = play(pages, ["sh", "-c", "sleep 60 & echo $!; wait"], 1.0)
    # the bound (1 s), the kill and the mock's start and stop; the command alone would take 60 s
    clock.assert_within(9, "playing", plus=1, cap=50)
    assert played.exit_code is None and played.ended == "the client did not finish within 1 s (killed)"
    assert verdicts["AP-CLIENT-010"].status is Status.FAILED
    child = int(played.output.split()[0])
    deadline = Deadline(5)
    while not _gone(child) and not deadline.passed():
        time.sleep(0.05)
    assert _gone(child), f"the command's child {child} outlived the bound"
