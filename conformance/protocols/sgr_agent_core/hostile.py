"""SGR Agent Core's part of the hostile inputs (``check/hostile.py``): hostile text as a chat's
message and as a clarification's (provide_clarification, to an agent asked to wait for one), then
the agent list, another agent's state, the clarified agent's state, the models and health read
back. The bodies that are not objects are SGR-ERR-004's."""

from __future__ import annotations

from ...check import hostile
from ...check.context import Context
from ...check.http import Response
from ...verdicts.requirements import Level
from .requirements import CHAT, PROVOKE, agent_of, chat_model, record, ref, registry, research, settle, user


@registry.requirement(
    "SGR-HOSTILE-001",
    Level.MUST,
    hostile.TEXT_STATEMENT.format(owners=""),
    hostile.TEXT_REF.format(lists=ref("/paths/~1agents/get/responses/200")),
    hostile.TEXT_DEPENDS,
)
def hostile_text(ctx: Context) -> None:
    victim = agent_of(ctx, research(ctx).rec)
    model = chat_model(ctx)

    def chat(text: str) -> Response:
        body = {"model": model, "messages": [user(text)], "stream": True}
        return hostile.send_json(ctx, "POST", CHAT, hostile.json_bytes(body), streamed=True)

    # one agent invited to ask for a clarification (a server decides by itself whether it waits:
    # the first text resumes it, the later ones reach an agent no longer waiting, which the
    # document answers too); its research settled first, so its state is read as a victim
    clarified = agent_of(ctx, record(ctx, CHAT, {"model": model, "messages": [user(PROVOKE)], "stream": True}))
    settle(ctx, clarified)

    def clarification(text: str) -> Response:
        body = hostile.json_bytes({"messages": [user(text)]})
        return hostile.send_json(ctx, "POST", f"/agents/{clarified}/provide_clarification", body, streamed=True)

    hostile.survives_hostile_text(
        ctx,
        [
            hostile.Read("the agent list", lambda: ctx.client.get("/agents")),
            hostile.Read("another agent's state", lambda: ctx.client.get(f"/agents/{victim}/state")),
            hostile.Read("the clarified agent's state", lambda: ctx.client.get(f"/agents/{clarified}/state")),
            hostile.Read("the models", lambda: ctx.client.get("/v1/models")),
            hostile.Read("health", lambda: ctx.client.get("/health")),
        ],
        [
            ("createChatCompletion messages[].content", chat),
            ("provideClarification messages[].content", clarification),
        ],
    )
