"""A list answer against what the client made and removed: each object it made listed with the
members it knows (``edges.same``), each it removed gone, and the list's count, where it has one,
counting the items (``lists.holds``); a list's count that writes the server refused left as it was
(``lists.count_kept``). One rule each, parametrised by the list's keys through the facts; the
scenario checks, the proxy's judge and replay call them."""

from __future__ import annotations

from collections.abc import Sequence
from itertools import pairwise
from typing import Any

from ..edges import difference, same
from ..oracle import parse_datetime
from ..shown import shown
from .base import Facts, Seen, is_json, judgment

HOLDS = "lists.holds"


def miscounted(name: str, count: Any, listed: int, noun: str) -> str | None:
    """How a list's count ``name`` fails to count the ``listed`` items (``noun``), or None."""
    return None if count == listed else f"{name} {shown(count)} does not count the {listed} {noun} listed"


@judgment(HOLDS)
def list_holds(seen: Seen, facts: Facts) -> list[str]:
    """Facts: ``items`` (the list's key), ``id`` (an item's id member), ``total`` (the count's key,
    optional), ``made`` (``[{"id", "members"}]``: each object made and the members it must be listed
    with; ids as values, so a replay renames them or knows it cannot), ``gone`` (ids it must not list)."""
    key, id_key = str(facts["items"]), str(facts["id"])
    body = seen.json()
    items = body.get(key) if is_json(body) and isinstance(body, dict) else None
    if not isinstance(items, list):
        return [f"the answer is not an object listing {key}: {shown(body if is_json(body) else seen.body, 120)}"]
    problems = []
    total = facts.get("total")
    miscount = miscounted(total, body.get(total), len(items), key) if total else None
    if miscount:
        problems.append(miscount)
    listed = {item.get(id_key): item for item in items if isinstance(item, dict)}
    for entry in facts.get("made") or ():
        made, members = entry["id"], entry.get("members") or {}
        item = listed.get(made)
        if item is None:
            problems.append(f"{made} is not listed; listed: {shown(sorted(map(str, listed))[:10])}")
            continue
        for name, value in dict(members).items():
            if not same(item.get(name), value):
                problems.append(f"{made} is listed with {name} {difference(item.get(name), value)}")
    problems += [f"{gone} is still listed" for gone in facts.get("gone") or () if gone in listed]
    return problems


KEPT = "lists.count_kept"


@judgment(KEPT)
def count_kept(seen: Seen, facts: Facts) -> list[str]:
    """A list read after writes the server refused counts what it counted before them: a refused
    write made nothing (Agent Protocol's 422 to an invalid create, AP-ERR-004). Facts: ``count``
    (the count's path in the answer, as keys: ``["pagination", "total_items"]``), ``before`` (what
    it counted before the refused writes), ``refused`` (the writes, as a message names them)."""
    path, before = [str(key) for key in facts["count"]], facts["before"]
    body = seen.json()
    value: Any = body if is_json(body) else None
    for key in path:
        value = value.get(key) if isinstance(value, dict) else None
    if value == before:
        return []
    return [f"{'.'.join(path)} is {shown(value)} after {facts.get('refused') or 'the refused writes'}, {before} before"]


NEWEST_FIRST = "lists.newest_first"


def out_of_order(items: Sequence[Any], by: str, noun: str) -> str | None:
    """How ``items`` fail to be ordered newest first by their date-time member ``by``, or None.
    A value that names no instant is skipped: its form is the document's judge's subject."""
    stamps = [
        (item.get(by), at)
        for item in items
        if isinstance(item, dict) and (at := parse_datetime(item.get(by))[0]) is not None
    ]
    for (before, earlier), (after, later) in pairwise(stamps):
        if later > earlier:
            return f"{by} does not descend along the {noun}: {shown(before)} is listed before {shown(after)}"
    return None


@judgment(NEWEST_FIRST)
def newest_first(seen: Seen, facts: Facts) -> list[str]:
    """A list ordered newest first. Facts: ``items`` (the list's key), ``by`` (the date-time member
    it is ordered by)."""
    key, by = str(facts["items"]), str(facts["by"])
    body = seen.json()
    items = body.get(key) if is_json(body) and isinstance(body, dict) else None
    if not isinstance(items, list):
        return [f"the answer is not an object listing {key}: {shown(body if is_json(body) else seen.body, 120)}"]
    why = out_of_order(items, by, key)
    return [why] if why else []
