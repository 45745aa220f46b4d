"""Others writing to the target while the suite runs (another shard of the campaign, another user
of a shared staging server) do not move a verdict: the model-based phase holds only what its run
created, changed or deleted to the run's own history, and accepts others' items that read by id
(check/listing.py; issue 34, class 5)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import httpx
import pytest

from conformance.engine.runner import run
from conformance.run.options import RunOptions
from conformance.run.targets import embedded
from conformance.verdicts.results import RunResult, Status
from specs.documents import load

WRITES = 40
"""Most items the other writer creates in one run."""
PAUSE_S = 0.05
"""Between its writes: it keeps writing through the model-based phase's sequences."""
WRITING_S = 60.0
"""The longest it writes, whatever happens to the run."""


def _ap(http: httpx.Client, n: int) -> None:
    http.post("/ap/v1/agent/tasks", json={"input": f"another writer's task {n}"}).raise_for_status()


def _sgr(http: httpx.Client, n: int) -> None:
    body = {
        "model": "sgr_tool_calling_agent",
        "messages": [{"role": "user", "content": f"Research {n}"}],
        "stream": True,
    }
    with http.stream("POST", "/v1/chat/completions", json=body) as answer:
        answer.raise_for_status()
        agent = answer.headers.get("x-agent-id")
        for _ in answer.iter_bytes():
            pass
    if agent and n % 2:  # it deletes half of what it made: a list may show one its next read cannot
        http.delete(f"/agents/{agent}").raise_for_status()


def _synapse(http: httpx.Client, n: int) -> None:
    http.post("/agent/session", json={"agentAccessLevel": "PUBLICLY_ACCESSIBLE"}).raise_for_status()


def _neuro_san(http: httpx.Client, n: int) -> None:
    body = {"user_message": {"type": "HUMAN", "text": f"hello {n}"}, "chat_filter": {"chat_filter_type": "MAXIMAL"}}
    with http.stream("POST", "/api/v1/hello_world/streaming_chat", json=body) as answer:
        answer.raise_for_status()
        for _ in answer.iter_bytes():
            pass


WRITERS: dict[str, Callable[[httpx.Client, int], None]] = {
    "agent-protocol": _ap,
    "sgr-agent-core": _sgr,
    "synapse-agent": _synapse,
    "neuro-san": _neuro_san,
}
"""How another client of the same caller creates the items the protocol's model lists (NeuroSan
keeps no conversation on the server: another client's chats are all it can do there)."""


@contextmanager
def other_writer(protocol: str, base_url: str, writes: int = WRITES, pause: float = PAUSE_S) -> Iterator[list[int]]:
    """A thread that writes to the target (loopback, the suite's own caller's token) until the
    block ends, at most ``writes`` items within ``WRITING_S``; yields the count written so far."""
    written = [0]
    stop = threading.Event()
    write = WRITERS[protocol]

    def loop() -> None:
        deadline = time.monotonic() + WRITING_S
        headers = {"Authorization": "Bearer alice-token"}
        with httpx.Client(base_url=base_url, headers=headers, timeout=10.0) as http:
            while written[0] < writes and not stop.is_set() and time.monotonic() < deadline:
                write(http, written[0])
                written[0] += 1
                stop.wait(pause)

    thread = threading.Thread(target=loop, name=f"other writer ({protocol})", daemon=True)
    thread.start()
    try:
        yield written
    finally:
        stop.set()
        thread.join(WRITING_S)


def model_run(protocol: str, *, disturbed: bool) -> tuple[RunResult, int]:
    with embedded().serve(protocol) as server:
        base_url = server.url + load(protocol).info.base_path
        options = RunOptions(
            protocol=protocol,
            base_url=base_url,
            token="alice-token",
            second_token="bob-token",
            phases=("model",),
            max_examples=4,
        )
        if not disturbed:
            return run(options), 0
        with other_writer(protocol, base_url) as written:
            # the other writer is at work before the phase reads what the target holds
            deadline = time.monotonic() + WRITING_S
            while written[0] < 2 and time.monotonic() < deadline:
                time.sleep(0.01)
            result = run(options)
            return result, written[0]


def verdicts(result: RunResult) -> dict[str, tuple[Status, str]]:
    return {r.requirement.id: (r.status, r.message if r.status is not Status.PASSED else "") for r in result.results}


@pytest.mark.parametrize("protocol", sorted(WRITERS))
def test_another_writer_does_not_move_a_verdict(protocol: str) -> None:
    alone, _ = model_run(protocol, disturbed=False)
    shared, written = model_run(protocol, disturbed=True)
    assert written > 2, "the other writer wrote almost nothing while the run went on"
    assert {r.requirement.id for r in alone.results} and all(r.status is Status.PASSED for r in alone.results)
    assert {k: v[0] for k, v in verdicts(shared).items()} == {k: v[0] for k, v in verdicts(alone).items()}, verdicts(
        shared
    )


def test_a_task_list_that_grows_while_it_is_paged_is_never_failed_for_it() -> None:
    """AP-PAGE-001 walks the whole task list and checks each page's arithmetic against the first
    page's total_items. A list another client adds to between two pages is walked again (a page
    whose total_items disagrees with the first page read again still fails); one that changes
    under every walk, as here (a write every few milliseconds), is left not verified, never failed."""
    protocol = "agent-protocol"
    with embedded().serve(protocol) as server:
        options = RunOptions(protocol=protocol, base_url=server.url, only=("AP-PAGE-001",), phases=("scenario",))
        with other_writer(protocol, server.url, writes=1000, pause=0.005) as written:
            while written[0] < 100:  # a list of many pages, still growing
                time.sleep(0.01)
            before = written[0]
            result = run(options)
            assert before < written[0] < 1000, "the other writer did not write all through the run"
    [verdict] = result.results
    assert verdict.status is Status.PASSED or (
        verdict.status is Status.NOT_VERIFIED and "the list changed while each of 3 walks read it" in verdict.message
    ), verdict.message


@pytest.mark.parametrize("token", ["mock", "upstream offset"])
def test_a_session_list_that_grows_while_it_is_paged_is_never_failed_for_it(token: str) -> None:
    """SYN-PAGE-001 walks the session list until the sessions it created are all seen. A token
    counted from the newest session (upstream Synapse's, the control syn-list-token-offset) shows
    the last session served again on the next page when another client creates one between them:
    the list is walked again, and one that changes under every walk, as here, is left not
    verified, never failed (a single walk failed it: "listed more than once across pages")."""
    protocol = "synapse-agent"
    faults = ("syn-list-token-offset",) if token == "upstream offset" else ()
    with embedded().serve(protocol, faults=faults) as server:
        base_url = server.url + load(protocol).info.base_path
        options = RunOptions(
            protocol=protocol,
            base_url=base_url,
            token="alice-token",
            second_token="bob-token",
            only=("SYN-PAGE-001",),
            phases=("scenario",),
        )
        with other_writer(protocol, base_url, writes=1000, pause=0.005) as written:
            while written[0] < 30:  # a list of several pages, still growing
                time.sleep(0.01)
            before = written[0]
            result = run(options)
            assert before < written[0] < 1000, "the other writer did not write all through the run"
    [verdict] = result.results
    assert verdict.status is Status.PASSED or (
        verdict.status is Status.NOT_VERIFIED and "the list changed while each of 3 walks read it" in verdict.message
    ), verdict.message
