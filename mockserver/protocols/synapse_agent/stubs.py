"""Synapse agent chat's data stubs: how chat jobs turn out, chosen by what was asked and by whom::

    data:
      synapse-agent:
        jobs:
          - chatText: {contains: budget}        # predicates on the chat (bare values: equals);
            identity: alice                     # the user (a --token name), the session
            sessionId: 0b7c9b64-...
            seconds: 2                          # how long it stays PROCESSING (default --job-seconds)
            responseText: The budget is fine.   # the answer; or
            failure: {status: 500, reason: The agent failed}   # the job fails: its poll answers
                                                # this error (as the real service re-raises it)

The first rule whose predicates hold decides a job when it starts. A failed job adds nothing to
the session's history. A failure's status must be one the document gives the result's poll.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ...api import ProtocolApi
from ...errors import ApiError
from ...fixtures import checked, items_of, text_of
from ...matching import MatchError, Test, parse_test
from ...stubs import StubError, check_error

MAX_SECONDS = 3600.0


@dataclass(frozen=True, slots=True)
class Outcome:
    chat_text: Test | None
    identity: Test | None
    session_id: Test | None
    seconds: float | None
    response_text: str | None
    failure: ApiError | None

    def holds(self, chat_text: str, user: str, session_id: str) -> bool:
        return all(
            test is None or test.holds(value, text=True)
            for test, value in ((self.chat_text, chat_text), (self.identity, user), (self.session_id, session_id))
        )


@dataclass(frozen=True, slots=True)
class Data:
    jobs: Sequence[Outcome] = ()

    def outcome(self, chat_text: str, user: str, session_id: str) -> Outcome | None:
        return next((o for o in self.jobs if o.holds(chat_text, user, session_id)), None)


def _test(where: str, item: Any, name: str) -> Test | None:
    if name not in item:
        return None
    try:
        return parse_test(f"{where}.{name}", item[name])
    except MatchError as exc:
        raise StubError(str(exc)) from None


def read(where: str, raw: Any, api: ProtocolApi) -> Data:
    raw = checked(where, raw, {"jobs"})
    jobs = []
    fields = {"chatText", "identity", "sessionId", "seconds", "responseText", "failure"}
    for i, item in enumerate(items_of(f"{where}.jobs", raw.get("jobs"))):
        at = f"{where}.jobs[{i}]"
        item = checked(at, item, fields)
        if ("responseText" in item) == ("failure" in item):
            raise StubError(f"{at}: give responseText or failure (one of them)")
        seconds = item.get("seconds")
        if seconds is not None and (
            isinstance(seconds, bool) or not isinstance(seconds, int | float) or not 0 <= seconds <= MAX_SECONDS
        ):
            raise StubError(f"{at}.seconds: a number of seconds from 0 to {MAX_SECONDS:g}")
        failure = None
        if "failure" in item:
            given = checked(f"{at}.failure", item["failure"], {"status", "reason"}, {"status"})
            status = given["status"]
            if isinstance(status, bool) or not isinstance(status, int) or not 400 <= status <= 599:
                raise StubError(f"{at}.failure.status: an error status, 400 to 599")
            failure = ApiError(status, text_of(f"{at}.failure.reason", given.get("reason", "The agent failed")))
            check_error(f"{at}.failure", api, "getAgentChatResult", failure)
        response = text_of(f"{at}.responseText", item["responseText"]) if "responseText" in item else None
        jobs.append(
            Outcome(
                _test(at, item, "chatText"),
                _test(at, item, "identity"),
                _test(at, item, "sessionId"),
                float(seconds) if seconds is not None else None,
                response,
                failure,
            )
        )
    return Data(tuple(jobs))
