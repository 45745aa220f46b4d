"""Paging, one rule per fact whichever protocol pages that way.

By page numbers, as Agent Protocol's ``pagination`` object gives it: ``total_pages =
ceil(total_items / page_size)``, the page and size asked for echoed (on every page, those past the
last included), full pages but the last (``pages.numbers``); a page past the last one empty
(``pages.beyond``). Called by the scenario checks (AP-PAGE-001..004), the proxy's judge and replay;
the list's key and the documented defaults are its facts, so another protocol paging the same way
names its own.

By a token, as Synapse's lists give it (``nextPageToken``): each page reached by the token the one
before handed out, no token handed out twice (paging would never end), no item listed twice over
the walk (``pages.tokens``). The member names are the protocol's manifest's (``paging`` in its
``protocol.yaml``); ``TokenWalk`` keeps a walk's facts page after page for every driver that walks
(the scenario checks, the model)."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..shown import shown
from .base import Facts, Seen, is_json, judgment

NUMBERS = "pages.numbers"
FIELDS = ("total_items", "total_pages", "current_page", "page_size")


@dataclass(frozen=True, slots=True)
class Page:
    """One page as its answer and its request give it."""

    items: list[Any]
    pagination: dict[str, Any]
    current: int
    size: int
    total: int

    @property
    def pages(self) -> int:
        return math.ceil(self.total / self.size)

    @property
    def beyond(self) -> bool:
        """Past the last page (AP-PAGE-004's subject, not the arithmetic's)."""
        return self.current > max(self.pages, 1)

    @property
    def holds(self) -> int:
        """How many items this page must hold."""
        return max(0, min(self.size, self.total - (self.current - 1) * self.size))


def page_of(seen: Seen, facts: Facts) -> Page | str | None:
    """The page ``seen`` answers (a string: why it is no page; None: the request asked for no valid
    page, the document's judge has it). Facts: ``items`` (the list's key), ``pagination`` (the
    object's key, default ``pagination``), ``defaults`` (current_page and page_size when not sent),
    ``at_least`` (the items the client knows the list holds, for ``pages.numbers``: it made them)."""
    key, holder = str(facts["items"]), str(facts.get("pagination", "pagination"))
    body = seen.json()
    if not (
        is_json(body)
        and isinstance(body, dict)
        and isinstance(body.get(key), list)
        and isinstance(body.get(holder), dict)
    ):
        return f"the answer is not {{{key}, {holder}}}: {shown(body if is_json(body) else seen.body, 120)}"
    defaults = facts.get("defaults") or {}
    try:
        size = int(seen.param("page_size") or defaults.get("page_size") or 10)
        current = int(seen.param("current_page") or defaults.get("current_page") or 1)
    except ValueError:
        return None
    total = body[holder].get("total_items")
    if size < 1 or current < 1:
        return None
    if not isinstance(total, int) or isinstance(total, bool) or total < 0:
        return f"total_items is {shown(total)}"
    return Page(list(body[key]), dict(body[holder]), current, size, total)


@judgment(NUMBERS)
def page_numbers(seen: Seen, facts: Facts) -> list[str]:
    """A page's pagination against the arithmetic, and how many items it holds."""
    page = page_of(seen, facts)
    if page is None:
        return []
    if isinstance(page, str):
        return [page]
    where = f"page {page.current} of {page.total} items at page_size {page.size}"
    known = facts.get("at_least")
    if isinstance(known, int) and page.total < known:
        return [f"{where}: total_items {page.total} counts fewer than the {known} items known to be listed"]
    want = {"total_items": page.total, "total_pages": page.pages, "current_page": page.current, "page_size": page.size}
    got = {k: page.pagination.get(k) for k in FIELDS}
    if got != want:
        return [f"{where}: pagination: expected {shown(want)}, got {shown(got)}"]
    if not page.beyond and len(page.items) != page.holds:  # what lies past the end is pages.beyond's
        return [f"{where} holds {len(page.items)} items, not {page.holds}"]
    return []


BEYOND = "pages.beyond"


@judgment(BEYOND)
def page_beyond(seen: Seen, facts: Facts) -> list[str]:
    """A page past the last one holds no items (its totals are ``pages.numbers``'s subject)."""
    page = page_of(seen, facts)
    if page is None:
        return []
    if isinstance(page, str):
        return [page]
    if not page.beyond or not page.items:
        return []
    return [
        f"page {page.current} beyond the last of {page.total} items at page_size {page.size}: {len(page.items)} items"
    ]


TOKENS = "pages.tokens"


def listed(body: Mapping[str, Any], key: str) -> list[dict[str, Any]]:
    """The objects a page lists under ``key`` (none when it is no list)."""
    items = body.get(key)
    return [item for item in items if isinstance(item, dict)] if isinstance(items, list) else []


@judgment(TOKENS)
def page_tokens(seen: Seen, facts: Facts) -> list[str]:
    """A page reached by a token against the walk so far. Facts: ``items`` and ``token`` (the
    manifest's ``paging``: the answer's list, the member it hands out for the next page), ``id`` (an
    item's id member; none: items are not compared), ``handed_out`` (the tokens earlier pages of the
    walk handed out), ``listed`` (the ids earlier pages listed)."""
    key, token_key, id_key = str(facts["items"]), str(facts["token"]), facts.get("id")
    body = seen.json()
    if not (is_json(body) and isinstance(body, dict)):
        return [f"the answer is not an object listing {key}: {shown(body if is_json(body) else seen.body, 120)}"]
    problems = []
    token = body.get(token_key)
    if token and token in (facts.get("handed_out") or ()):
        problems.append(f"{token_key} {shown(token)} was handed out by an earlier page, so paging never ends")
    if id_key:  # a list that is no list is the document's judge's subject, not the paging's
        ids = [str(item.get(id_key)) for item in listed(body, key)]
        earlier = set(map(str, facts.get("listed") or ()))
        again = sorted({i for i, n in Counter(ids).items() if n > 1 or i in earlier})
        if again:
            problems.append(f"{key} lists {shown(again[:10])} again ({len(again)} listed by an earlier page or twice)")
    return problems


@dataclass(slots=True)
class TokenWalk:
    """One walk of a token-paged list: what each request sends, the facts each page is judged with
    (``pages.tokens``), what the walk listed. The driver makes the calls: ``request()``, then
    ``take(seen)`` with its answer, until ``done``."""

    paging: Mapping[str, str]
    """The manifest's ``paging``: ``items``, ``token``."""
    id: str | None = None
    most: int = 200
    """Most pages read: a server whose tokens never end (each new) ends the walk, ``exhausted``."""
    handed_out: list[Any] = field(default_factory=list)
    items: list[dict[str, Any]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    """Every problem a page of the walk showed, in order."""
    pages: int = 0
    next_token: Any = None
    done: bool = False
    broken: bool = False
    """A page was no JSON object: the walk stopped there (the page's form is the schema's subject)."""

    @property
    def exhausted(self) -> bool:
        """Still a token after ``most`` pages."""
        return self.pages >= self.most and bool(self.next_token)

    def request(self) -> dict[str, Any]:
        """The next request's body: the token handed out last, or nothing for the first page."""
        return {self.paging["token"]: self.next_token} if self.next_token else {}

    def facts(self) -> dict[str, Any]:
        """What the next page is judged with (JSON values: a finding stores them)."""
        ids = [str(item.get(self.id)) for item in self.items] if self.id else []
        return {**self.paging, "id": self.id, "handed_out": list(self.handed_out), "listed": ids}

    def take(self, seen: Seen) -> list[str]:
        """One page: its problems (also kept in ``problems``); the walk ends after the last page, a
        page that is no JSON object, a token handed out before, or ``most`` pages."""
        found = page_tokens(seen, self.facts())
        self.problems += found
        self.pages += 1
        body = seen.json()
        if not (is_json(body) and isinstance(body, dict)):
            self.done = self.broken = True
            return found
        self.items += listed(body, self.paging["items"])
        token = body.get(self.paging["token"])
        repeated = bool(token) and token in self.handed_out
        self.next_token = token if token and not repeated else None
        if token:
            self.handed_out.append(token)
        self.done = not self.next_token or self.pages >= self.most
        return found
