"""Synapse's faults of facts across calls (issue 34, class 7): what one call of a paged list says
of the next."""

from __future__ import annotations

from ...faults import Fault, fault_maker

_fault = fault_maker("synapse-agent")
SHOW_TIMES = (
    "createAgentSession",
    "getAgentSession",
    "updateAgentSession",
    "listAgentSessions",
    "getSessionHistory",
    "getAgentChatResult",
)
"""The operations whose answers carry date-times."""

ACROSS: tuple[Fault, ...] = (
    _fault(
        "syn-list-token-offset",
        (),
        "control: listAgentSessions hands out upstream Synapse's nextPageToken, <limit>a<offset> counted from the "
        "newest session: paging is exact while the list stands still, and a session created between two pages "
        "shows the last one served again (tests/conformance/test_other_writers.py writes so)",
        control=True,
        operation="listAgentSessions",
    ),
    _fault(
        "syn-times-utc-offset",
        (),
        "control: every date-time (a session's startedOn and modifiedOn, a job's, a history's) is written in "
        "UTC with a +00:00 offset instead of Z",
        control=True,
        touches=SHOW_TIMES,
    ),
    _fault(
        "syn-times-east-offset",
        (),
        "control: every date-time is written as the server's local time (UTC+3) with its +03:00 offset: the same "
        "instants, another wall clock",
        control=True,
        touches=SHOW_TIMES,
    ),
)
