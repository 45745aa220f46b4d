"""An answer that echoes what was sent: each member the request carried comes back the same
(``edges.same``: booleans told from numbers, numbers at the precision the RFCs allow, key order
free). One rule, ``echoes.members``, whose facts are the members sent; the scenario checks, the
proxy's judge and replay call it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..edges import difference, same
from ..shown import shown
from .base import Facts, Seen, is_json, judgment

MEMBERS = "echoes.members"


def unechoed(got: Any, sent: Mapping[str, Any]) -> str | None:
    """How ``got`` (a JSON object) fails to echo the first of the ``sent`` members it changed, or None."""
    if not isinstance(got, dict):
        return f"the answer {shown(got, 200)} is not an object echoing {', '.join(sent)}"
    for name, value in sent.items():
        if not same(got.get(name), value):
            return f"{name} {difference(got.get(name), value)}"
    return None


@judgment(MEMBERS)
def echoes_members(seen: Seen, facts: Facts) -> list[str]:
    """Facts: ``sent`` (the members the write carried, as sent)."""
    body = seen.json()
    why = unechoed(body if is_json(body) else seen.body.decode("utf-8", "replace"), dict(facts["sent"]))
    return [why] if why else []
