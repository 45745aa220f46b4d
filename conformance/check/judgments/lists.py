"""A list answer against what the client made and removed: each object it made listed with the
members it knows (``edges.same``), each it removed gone, and the list's count, where it has one,
counting the items (``lists.holds``). One rule, parametrised by the list's keys through the facts;
the scenario checks, the proxy's judge and replay call it."""

from __future__ import annotations

from ..edges import difference, same
from ..shown import shown
from .base import Facts, Seen, is_json, judgment

HOLDS = "lists.holds"


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
    if total and body.get(total) != len(items):
        problems.append(f"{total} {shown(body.get(total))} does not count the {len(items)} {key} listed")
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
