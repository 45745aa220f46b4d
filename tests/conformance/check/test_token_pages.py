"""Paging by a token (``pages.tokens``, ``TokenWalk``): one rule for every driver that walks a list
a token pages (Synapse's scenario checks and its model), its member names the manifest's."""

from __future__ import annotations

import json
from typing import Any

from conformance.check.judgments import Seen, judge
from conformance.check.judgments.pages import TOKENS, TokenWalk
from specs.documents import protocol

PAGING = {"items": "page", "token": "nextPageToken"}


def page(ids: list[str], token: Any = None) -> Seen:
    body: dict[str, Any] = {"page": [{"sessionId": i} for i in ids]}
    if token is not None:
        body["nextPageToken"] = token
    return Seen("POST", "http://127.0.0.1:1/repo/v1/agent/sessions/list", 200, {}, json.dumps(body).encode())


def walked(pages: list[Seen], id_key: str | None = None, most: int = 10) -> TokenWalk:
    walk = TokenWalk(PAGING, id=id_key, most=most)
    for seen in pages:
        assert not walk.done
        walk.take(seen)
    return walk


def test_the_names_are_the_manifests() -> None:
    assert dict(protocol("synapse-agent").paging) == PAGING
    assert not protocol("agent-protocol").paging  # it pages by numbers (pages.numbers)


def test_a_fair_walk_follows_each_token_once_and_lists_each_item_once() -> None:
    walk = TokenWalk(PAGING, id="sessionId")
    assert walk.request() == {}
    assert walk.take(page(["a", "b"], "t1")) == []
    assert walk.request() == {"nextPageToken": "t1"}
    assert walk.take(page(["c"])) == []
    assert walk.done and not walk.exhausted and not walk.problems
    assert [i["sessionId"] for i in walk.items] == ["a", "b", "c"]


def test_a_token_handed_out_twice_ends_the_walk_and_is_the_pages_problem() -> None:
    # syn-page-token-repeats: the token names the page just served, so paging never ends
    walk = walked([page(["a"], "t1"), page(["b"], "t1")])
    assert walk.done and walk.next_token is None
    (problem,) = walk.problems
    assert problem == 'nextPageToken "t1" was handed out by an earlier page, so paging never ends'
    facts = {**PAGING, "handed_out": ["t1"]}
    assert judge(TOKENS, page(["b"], "t1"), facts) == [problem]
    assert judge(TOKENS, page(["b"], "t2"), facts) == []  # the control: a new token


def test_an_item_an_earlier_page_listed_is_listed_again() -> None:
    # syn-list-token-page-short's neighbour: a cursor one off lists a session on two pages
    walk = walked([page(["a", "b"], "t1"), page(["b", "c"])], id_key="sessionId")
    assert walk.problems == ['page lists ["b"] again (1 listed by an earlier page or twice)']
    facts = {**PAGING, "id": "sessionId", "listed": ["a", "b"]}
    assert judge(TOKENS, page(["b", "c"]), facts) != []
    assert judge(TOKENS, page(["c", "d"]), facts) == []  # the control
    assert judge(TOKENS, page(["b", "c"]), {**facts, "id": None}) == []  # a walk that names no id compares none
    assert judge(TOKENS, page(["d", "d"]), facts) != []  # twice on one page


def test_a_walk_whose_tokens_never_end_stops_exhausted() -> None:
    walk = walked([page([str(n)], f"t{n}") for n in range(3)], most=3)
    assert walk.done and walk.exhausted and not walk.problems
    fair = walked([page(["a"], "t1"), page(["b"])], most=2)
    assert fair.done and not fair.exhausted  # the control: the last page hands out no token


def test_an_answer_that_is_no_object_ends_the_walk() -> None:
    walk = walked([Seen("POST", "http://h/x", 200, {}, b"[1, 2]")])
    assert walk.done and walk.broken
    assert walk.problems[0].startswith("the answer is not an object listing page")
    leaves_out = walked([Seen("POST", "http://h/x", 200, {}, b"{}")])  # items left out: the schema's subject
    assert leaves_out.done and not leaves_out.broken and not leaves_out.problems
