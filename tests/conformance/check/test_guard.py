"""The run's stall guard: routes named once for every phase, a route that stalled twice refused, a
target that stopped answering recognised; and the bounded client telling it, over real sockets."""

from __future__ import annotations

import time

import httpx
import pytest

from conformance.check.guard import (
    STALLED_WAIT_S,
    STALLS_PER_ROUTE,
    STOPPED_AFTER,
    STOPPED_ANSWERING,
    Routes,
    StallGuard,
)
from conformance.check.http import Client, Limits, TargetError
from specs.documents import load
from tests.hostile import HostileServer, closed_port_url
from tests.timing import Clock


def test_a_route_is_the_template_of_the_first_method_that_has_one() -> None:
    routes = Routes(load("agent-protocol"), "http://127.0.0.1:1")
    assert routes("http://127.0.0.1:1/ap/v1/agent/tasks/abc/steps?page=2") == "/ap/v1/agent/tasks/{task_id}/steps"
    assert routes("http://127.0.0.1:1/ap/v1/agent/tasks") == "/ap/v1/agent/tasks"
    assert routes("http://127.0.0.1:1/nowhere/x") == "/nowhere/x"  # undocumented: the path itself
    synapse = load("synapse-agent")
    under_base = Routes(synapse, "http://h:2" + synapse.info.base_path)
    assert under_base(f"http://h:2{synapse.info.base_path}/agent/session/s1") == "/agent/session/{sessionId}"


def test_a_route_that_stalled_twice_gets_no_more_generated_cases_and_short_waits() -> None:
    guard = StallGuard()
    guard.stalled("/a", "GET /a: sent nothing for 1 s (stalled)")
    assert guard.refusal("/a") == ""  # once is not enough: a slow moment happens
    assert guard.wait("/a", 10.0) == 10.0
    guard.complete("/b")
    guard.stalled("/a", "GET /a: sent nothing for 1 s (stalled)")
    assert guard.refusal("/a") == f"not sent: /a stalled {STALLS_PER_ROUTE} times, so it gets no more generated cases"
    assert guard.refusal("/b") == ""
    # a check's one request is still sent (its requirement is decided by the answer), but not waited on long
    assert guard.refusal("/a", generated=False) == ""
    assert guard.wait("/a", 10.0) == STALLED_WAIT_S and guard.wait("/a", 30.0) == 3.0 and guard.wait("/a", 0.5) == 0.5
    assert guard.wait("/b", 10.0) == 10.0
    assert guard.summary() == {"/a": {"stalls": 2, "cases_not_sent": 1}}
    assert guard.silent() == {"/a"}
    assert not guard.lost


def test_consecutive_silence_on_different_routes_is_a_target_that_stopped_answering() -> None:
    told: list[str] = []
    guard = StallGuard(on_lost=told.append)
    # the same route again and again is that route's trouble, not the target's
    for _ in range(5):
        guard.unanswered("/a", "/a: connection reset")
    assert not guard.lost
    # an answer between two silences breaks the run of them
    guard.unanswered("/b", "/b: connection reset")
    guard.complete("/c")
    guard.unanswered("/d", "/d: connection reset")
    guard.stalled("/e", "/e sent nothing for 20 s (stalled)")
    assert not guard.lost
    guard.unanswered("/f", "/f: cannot connect")
    assert guard.lost == (
        "3 consecutive exchanges on 3 different routes got no answer: "
        "/d: connection reset; /e sent nothing for 20 s (stalled); /f: cannot connect"
    )
    assert told == [guard.lost]
    guard.unanswered("/g", "/g: connection reset")
    assert told == [guard.lost]  # told once
    # from now on nothing is sent, to any route
    assert guard.refusal("/c") == f"not sent: {STOPPED_ANSWERING} ({guard.lost})"
    assert guard.refusal("/c", generated=False) == guard.refusal("/c")
    assert STOPPED_AFTER == 3


def test_the_client_waits_briefly_on_a_route_that_stalled_twice() -> None:
    guard = StallGuard()
    with HostileServer("stall_headers") as url:
        client = Client(url, Limits(timeout=3.0), guard=guard)
        guard.counts["/tasks/1"] = STALLS_PER_ROUTE - 1  # as if an earlier phase had met it once
        started = time.monotonic()
        with pytest.raises(TargetError, match=r"sent nothing for 3 s \(stalled\)$"):
            client.get("/tasks/1")
        assert time.monotonic() - started >= 3.0
        clock = Clock()
        with pytest.raises(TargetError, match=r"sent nothing for 1 s \(stalled\) \(/tasks/1 stalled 2 times before"):
            client.get("/tasks/1")
        clock.assert_within(1.5, "the second wait", plus=1, cap=3)  # not the timeout again
        client.close()
    assert guard.counts == {"/tasks/1": 3}


def test_a_stream_that_stalls_inside_a_check_is_told_even_when_the_check_catches_it() -> None:
    guard = StallGuard()
    with HostileServer("stall_mid_stream") as url:
        client = Client(url, Limits(timeout=0.5, stream_seconds=5), guard=guard)
        with client.stream("POST", "/chat", json={}) as stream:
            try:  # as a check that records the error and goes on does
                stream.read()
            except TargetError as exc:
                assert "stream stalled" in str(exc)
        client.close()
    assert guard.counts == {"/chat": 1}


def test_a_target_gone_away_stops_the_client_at_once() -> None:
    told: list[str] = []
    guard = StallGuard(on_lost=told.append)
    client = Client(closed_port_url(), Limits(timeout=1.0), guard=guard)
    for path in ("/a", "/b", "/c"):
        with pytest.raises(TargetError, match="cannot connect"):
            client.get(path)
    assert told and "3 consecutive exchanges on 3 different routes got no answer" in told[0]
    clock = Clock()
    with pytest.raises(TargetError, match=f"not sent: {STOPPED_ANSWERING}"):
        client.get("/d")
    clock.assert_within(0.1, "the refusal")
    client.close()
    # the refused call is still evidence: what would have been sent, and why it was not
    refused = client.log[-1]
    assert refused.status is None and refused.error.startswith("not sent:") and refused.curl


def test_a_whole_answer_keeps_the_target_answering() -> None:
    guard = StallGuard()
    client = Client(
        "http://target.test",
        Limits(timeout=1.0),
        guard=guard,
        transport=httpx.MockTransport(lambda r: httpx.Response(503)),
    )
    for n in range(10):
        assert client.get(f"/r{n}").status == 503  # an error is an answer
    assert not guard.lost and guard.answered == {f"/r{n}" for n in range(10)}
