"""A Synapse agent chat client for the ``client`` command's scenarios:
``python -m conformance.client.examples.synapse_agent [--break NAME]`` (``catalogue.py``)."""

from __future__ import annotations

import os
import sys
import time
from typing import Any

from .calls import Answer, GaveUp, call, entry, expect, fields, patient

BREAKS = (
    "ignore-retry-after",
    "flood",
    "first-page-only",
    "tight-poll",
    "no-poll",
    "retry-401",
    "strict-fields",
    "bad-body",
)
POLL_S = 0.5
MAX_POLLS = 100
UNAUTHORIZED_LOOP = 20
"""How often the broken client sends a refused request again (bounded: the scenario's timeout too)."""


def _token() -> str:
    return os.environ["CONFORMANCE_TOKEN"]


def _session(broken: str | None) -> dict[str, Any]:
    body = {"agentAccessLevel": "EVERYTHING" if broken == "bad-body" else "PUBLICLY_ACCESSIBLE"}
    answer: Answer = patient("POST", "/agent/session", body, _token(), broken=broken)
    if broken == "retry-401":
        for _ in range(UNAUTHORIZED_LOOP):
            if answer.status != 401:
                break
            answer = call("POST", "/agent/session", body, _token())
    session = fields(expect(answer, "creating a session", 201))
    if broken == "strict-fields":
        known = {"sessionId", "agentAccessLevel", "startedOn", "startedBy", "modifiedOn", "etag", "agentRegistrationId"}
        if set(session) - known:
            raise ValueError(f"unexpected fields {sorted(set(session) - known)}")  # a strict model's crash
    return session


def create_session(broken: str | None) -> None:
    print(_session(broken)["sessionId"])


def profile(broken: str | None) -> None:
    print(fields(expect(patient("GET", "/userProfile", token=_token(), broken=broken), "the profile")).get("userName"))


def list_pages(broken: str | None) -> None:
    token: str | None = None
    while True:
        answer = patient("POST", "/agent/sessions/list", {"nextPageToken": token} if token else {}, _token())
        page = fields(expect(answer, "listing sessions"))
        print(f"{len(page['page'])} sessions")
        token = page.get("nextPageToken")
        if not token or broken == "first-page-only":
            return


def chat(broken: str | None) -> None:
    session = _session(broken)
    started = patient(
        "POST", "/agent/chat/async/start", {"sessionId": session["sessionId"], "chatText": "hello"}, _token()
    )
    job = fields(expect(started, "starting the chat", 201))["token"]
    for _ in range(MAX_POLLS if broken != "tight-poll" else 100_000):
        answer = call("GET", f"/agent/chat/async/get/{job}", token=_token())
        if answer.status in (200, 201) or broken == "no-poll":
            print(answer.json().get("responseText", ""))
            return
        if answer.status != 202:
            raise GaveUp(f"job {job}: {answer.status}")
        if broken != "tight-poll":
            time.sleep(POLL_S)
    raise GaveUp(f"job {job} still running after {MAX_POLLS} polls")


def main(argv: list[str] | None = None) -> int:
    tasks = {
        "busy": create_session,
        "list-pages": list_pages,
        "job-poll": chat,
        "retry-after": create_session,
        "revoked-token": create_session,
        "unknown-fields": create_session,
        "redirect": profile,
        "gzip": profile,
    }
    return entry("synapse_agent", tasks, BREAKS, argv)


if __name__ == "__main__":
    sys.exit(main())
