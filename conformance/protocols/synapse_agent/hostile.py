"""Synapse's part of the hostile inputs (``check/hostile.py``): hostile text as a chat's chatText,
then the caller's and another user's sessions and histories read back. The bodies that are not
objects are SYN-ERR-002's."""

from __future__ import annotations

from ...check import hostile
from ...check.context import Context
from ...check.http import Response
from ...verdicts.requirements import Level
from .requirements import (
    CHAT_REQUEST,
    CHAT_START,
    DOC,
    SESSION,
    SESSIONS_LIST,
    _seg,
    _session,
    _start,
    _wait_job,
    registry,
    usable_token,
)


@registry.requirement(
    "SYN-HOSTILE-001",
    Level.MUST,
    hostile.TEXT_STATEMENT.format(owners=", for the caller and for another user"),
    hostile.TEXT_REF.format(lists=f"{DOC}#/paths/~1agent~1sessions~1list/post/responses/200"),
    hostile.TEXT_DEPENDS,
)
def hostile_text(ctx: Context) -> None:
    attacked = _session(ctx)["sessionId"]
    victim = _session(ctx)["sessionId"]
    _start(ctx, victim, "a chat before the hostile text")
    other = ctx.second_token if ctx.second_token and ctx.second_token != ctx.token else None
    theirs = _session(ctx, auth=other)["sessionId"] if other else None
    started: list[str] = []

    def chat(text: str) -> Response:
        body = {"concreteType": CHAT_REQUEST, "sessionId": attacked, "chatText": text}
        response = hostile.send_json(ctx, "POST", CHAT_START, hostile.json_bytes(body))
        answer = response.json_value() if response.status < 300 else None
        token = usable_token(answer.get("token")) if isinstance(answer, dict) else None
        if token is not None:
            started.append(token)
        return response

    def post(path: str, auth: str | None = None) -> hostile.Read:
        return hostile.Read(path, lambda: ctx.client.post(path, json={}, auth=auth))

    def history(session_id: str) -> str:
        return f"/agent/session/history/{_seg(session_id)}"

    reads = [
        hostile.Read("the caller's sessions", post(SESSIONS_LIST).read),
        hostile.Read("another session of the caller", lambda: ctx.client.get(f"{SESSION}/{_seg(victim)}")),
        hostile.Read("another session's history", post(history(victim)).read),
        hostile.Read("the attacked session", lambda: ctx.client.get(f"{SESSION}/{_seg(attacked)}")),
        hostile.Read("the attacked session's history", post(history(attacked)).read),
    ]
    if other and theirs:
        reads += [
            hostile.Read("another user's sessions", post(SESSIONS_LIST, other).read),
            hostile.Read("another user's session history", post(history(theirs), other).read),
        ]

    def settled() -> Response:
        # first after the hostile text: what a job stores (its history item) is stored by its end
        for token in started:
            _wait_job(ctx, token)
        return ctx.client.post(history(attacked), json={})

    settle = hostile.Read("the attacked session's history, its chats' jobs done", settled)
    hostile.survives_hostile_text(ctx, [settle, *reads], [("startAgentChat chatText", chat)])
