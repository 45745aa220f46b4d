"""Paging by page numbers, as Agent Protocol's ``pagination`` object gives it: ``total_pages =
ceil(total_items / page_size)``, the page and size asked for echoed (on every page, those past the
last included), full pages but the last (``pages.numbers``); a page past the last one empty
(``pages.beyond``). Each is one rule, called by the scenario checks (AP-PAGE-001..004), the
proxy's judge and replay; the list's key and the documented defaults are its facts, so another
protocol paging the same way names its own."""

from __future__ import annotations

import math
from dataclasses import dataclass
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
