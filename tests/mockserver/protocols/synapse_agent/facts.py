"""synapse-agent's facts for the generic tests (tests/facts.py)."""

from __future__ import annotations

import httpx

from tests.facts import Call, Facts, Fixtures

ALICE = {"Authorization": "Bearer alice-token"}
BOB = {"Authorization": "Bearer bob-token"}


def check_fixtures(c: httpx.Client) -> None:
    session = c.get("/repo/v1/agent/session/fixture-session", headers=ALICE).json()
    assert session["agentAccessLevel"] == "READ_YOUR_PRIVATE_DATA"
    assert c.get("/repo/v1/agent/session/fixture-session", headers=BOB).status_code == 403  # owned by alice
    history = c.post("/repo/v1/agent/session/history/fixture-session", json={}, headers=ALICE).json()["page"]
    assert [i["requestText"] for i in history] == ["bye", "hi"]  # newest first
    assert history[0]["responseText"] == "ciao" and "hi" in history[1]["responseText"]


FACTS = Facts(
    "synapse-agent",
    # statuses checkable, bearer auth declared; schemathesis never chains its creates to a read
    schema_requirements=frozenset({"001", "002", "003", "005", "006", "007", "010"}),
    served=Call("POST", "/repo/v1/agent/sessions/list", {}, ALICE),
    json_post=Call("POST", "/repo/v1/agent/session", headers=ALICE),
    fixtures=Fixtures(
        document={
            "sessions": [
                {
                    "sessionId": "fixture-session",
                    "owner": "alice",
                    "agentAccessLevel": "READ_YOUR_PRIVATE_DATA",
                    "history": [{"requestText": "hi"}, {"requestText": "bye", "responseText": "ciao"}],
                }
            ]
        },
        loaded={"sessions": ["fixture-session"]},
        check=check_fixtures,
        gone=Call("GET", "/repo/v1/agent/session/fixture-session", headers=ALICE),
    ),
)
