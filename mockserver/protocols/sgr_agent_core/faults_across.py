"""SGR Agent Core's faults of facts across calls (issue 34, class 7): what the agent list says of
the chat that created an agent (its creation_time, its task_messages)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta, timezone

from ...faults import Fault, fault_maker
from ...reply import Reply

_fault = fault_maker("sgr-agent-core")
EAST = timezone(timedelta(hours=3))
"""A server's zone east of UTC (Moscow's): its local time labelled UTC is three hours ahead."""


def _creation_times(write: Callable[[datetime], str]) -> Callable[[Reply], None]:
    """A listAgents edit: each creation_time (the mock's local time without offset) written anew
    from its instant."""

    def edit(reply: Reply) -> None:
        if reply.status != 200 or not isinstance(reply.body, dict):
            return
        for agent in reply.body.get("agents") or ():
            if isinstance(agent, dict) and isinstance(agent.get("creation_time"), str):
                instant = datetime.fromisoformat(agent["creation_time"]).astimezone(UTC)
                agent["creation_time"] = write(instant)

    return edit


def _newest_first(reply: Reply) -> None:
    if reply.status == 200 and isinstance(reply.body, dict) and isinstance(reply.body.get("agents"), list):
        reply.body["agents"].reverse()


ACROSS: tuple[Fault, ...] = (
    _fault(
        "sgr-list-newest-first",
        (),
        "control: GET /agents lists the agents newest first (the document fixes no order)",
        control=True,
        operation="listAgents",
        mutate=_newest_first,
    ),
    _fault(
        "sgr-creation-time-local-as-utc",
        ("SGR-FACT-003",),
        "GET /agents writes creation_time as the server's local time (UTC+3) labelled UTC: "
        "datetime.now().isoformat() + 'Z', three hours after the chat that created the agent",
        operation="listAgents",
        mutate=_creation_times(lambda at: at.astimezone(EAST).replace(tzinfo=None).isoformat() + "Z"),
    ),
    _fault(
        "sgr-creation-time-utc-offset",
        (),
        "control: GET /agents writes creation_time in UTC with a +00:00 offset (an instant, where the "
        "document's example is local time without one)",
        control=True,
        operation="listAgents",
        mutate=_creation_times(lambda at: at.isoformat(timespec="seconds")),
    ),
    _fault(
        "sgr-creation-time-east-offset",
        (),
        "control: GET /agents writes creation_time as the server's local time (UTC+3) with its +03:00 offset",
        control=True,
        operation="listAgents",
        mutate=_creation_times(lambda at: at.astimezone(EAST).isoformat(timespec="seconds")),
    ),
    _fault(
        "sgr-creation-time-at-read",
        ("SGR-FACT-003",),
        "GET /agents writes creation_time as the time of the read (a response model whose default is "
        "datetime.now()): local time without offset, as the document has it, but later on every read",
        operation="listAgents",
        mutate=_creation_times(lambda _: datetime.now().isoformat()),
    ),
    _fault(
        "sgr-content-parts-flattened",
        ("SGR-FACT-005",),
        "a message whose content is a list of parts is stored as one text, its text parts joined (a text-only "
        "message model): task_messages no longer show the parts the chat sent",
        operation="createChatCompletion",
        touches=("listAgents", "getAgentState"),
    ),
)
