"""SGR Agent Core's part of the hostile inputs (``check/hostile.py``): hostile text as a chat's
message, then the agent list, another agent's state, the models and health read back. The bodies
that are not objects are SGR-ERR-004's."""

from __future__ import annotations

from ...check import hostile
from ...check.context import Context
from ...check.http import Response
from ...verdicts.requirements import Level
from .requirements import CHAT, agent_of, chat_model, ref, registry, research, user


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

    hostile.survives_hostile_text(
        ctx,
        [
            hostile.Read("the agent list", lambda: ctx.client.get("/agents")),
            hostile.Read("another agent's state", lambda: ctx.client.get(f"/agents/{victim}/state")),
            hostile.Read("the models", lambda: ctx.client.get("/v1/models")),
            hostile.Read("health", lambda: ctx.client.get("/health")),
        ],
        [("createChatCompletion messages[].content", chat)],
    )
