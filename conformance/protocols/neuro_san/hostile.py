"""NeuroSan's part of the hostile inputs (``check/hostile.py``): hostile text as a chat's question,
then connectivity and function read back. The bodies that are not objects are NS-ERR-003's."""

from __future__ import annotations

from ...check import hostile
from ...check.context import Context
from ...check.http import Response
from ...verdicts.requirements import Level
from .requirements import CONNECTIVITY, agent, chat_request, registry


@registry.requirement(
    "NS-HOSTILE-001",
    Level.MUST,
    hostile.TEXT_STATEMENT.format(owners=""),
    hostile.TEXT_REF.format(lists=f"{CONNECTIVITY}/responses/200 and function's"),
    hostile.TEXT_DEPENDS,
)
def hostile_text(ctx: Context) -> None:
    name = agent(ctx)
    base = f"/api/v1/{name}"

    def ask(text: str) -> Response:
        return hostile.send_json(
            ctx, "POST", f"{base}/streaming_chat", hostile.json_bytes(chat_request(text)), streamed=True
        )

    hostile.survives_hostile_text(
        ctx,
        [
            hostile.Read("connectivity", lambda: ctx.client.get(f"{base}/connectivity")),
            hostile.Read("function", lambda: ctx.client.get(f"{base}/function")),
            hostile.Read("a chat", lambda: ask("hello")),
        ],
        [("streaming_chat user_message.text", ask)],
    )
