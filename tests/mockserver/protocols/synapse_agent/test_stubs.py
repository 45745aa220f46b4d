"""Synapse agent chat's data stubs: job outcomes by chat text, user and session; a failed job's
poll answers its error in the protocol's shape, as the real service re-raises it."""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any

import httpx
import pytest

from mockserver import EmbeddedServer, MockConfig, create_app
from mockserver.stubs import StubError
from tests.timing import Deadline

Serve = Callable[..., AbstractContextManager[EmbeddedServer]]
SYN = "/repo/v1"
JOBS = {
    "jobs": [
        {"chatText": {"contains": "fail"}, "seconds": 0.1, "failure": {"status": 500, "reason": "The agent failed"}},
        {"chatText": "budget?", "identity": "alice", "seconds": 0.1, "responseText": "The budget is fine."},
    ]
}


def auth(user: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {user}-token"}


def ask(c: httpx.Client, user: str, text: str) -> tuple[str, httpx.Response]:
    session = c.post(f"{SYN}/agent/session", json={"agentAccessLevel": "PUBLICLY_ACCESSIBLE"}, headers=auth(user))
    session_id = session.json()["sessionId"]
    job = c.post(f"{SYN}/agent/chat/async/start", json={"sessionId": session_id, "chatText": text}, headers=auth(user))
    token = job.json()["token"]
    deadline = Deadline(10)
    while True:
        polled = c.get(f"{SYN}/agent/chat/async/get/{token}", headers=auth(user))
        if polled.status_code != 202 or deadline.passed():
            return session_id, polled
        time.sleep(0.05)


def test_job_outcomes(serve: Serve) -> None:
    with (
        serve(protocols=("synapse-agent",), stubs={"data": {"synapse-agent": JOBS}}) as server,
        httpx.Client(base_url=server.url) as c,
    ):
        session, failed = ask(c, "alice", "please fail")
        assert failed.status_code == 500
        assert failed.json()["reason"] == "The agent failed" and "concreteType" in failed.json()
        history = c.post(f"{SYN}/agent/session/history/{session}", json={}, headers=auth("alice"))
        assert history.json()["page"] == []  # a failed job answered nothing
        session, answered = ask(c, "alice", "budget?")
        assert answered.status_code == 200 and answered.json()["responseText"] == "The budget is fine."
        history = c.post(f"{SYN}/agent/session/history/{session}", json={}, headers=auth("alice"))
        assert [h["responseText"] for h in history.json()["page"]] == ["The budget is fine."]
        _, bobs = ask(c, "bob", "budget?")  # the rule names alice: bob gets the mock agent's answer
        assert bobs.status_code == 200 and bobs.json()["responseText"] != "The budget is fine."


@pytest.mark.parametrize(
    ("jobs", "message"),
    [
        ({"jobs": [{"failure": {"status": 302}}]}, ".jobs[0].failure.status: an error status, 400 to 599"),
        ({"jobs": [{"responseText": "x", "failure": {"status": 500}}]}, ".jobs[0]: give responseText or failure"),
        ({"jobs": [{"responseText": "x", "seconds": -1}]}, ".jobs[0].seconds: a number"),
    ],
)
def test_a_bad_job_rule_is_refused_with_the_path(jobs: Any, message: str) -> None:
    with pytest.raises(StubError, match="^" + re.escape("data.synapse-agent" + message)):
        create_app(MockConfig(protocols=("synapse-agent",), stubs={"data": {"synapse-agent": jobs}}))
