"""What a list of a target's resources must hold when others write to that target too: the rule
every protocol's model judges its lists by (issue 34, class 5).

Only what the run created, changed or deleted is held to the run's own history: an item the run
created and did not delete must be listed (once), an item it deleted must not be. Anything else
in the list was written by someone else (another shard of the campaign, another user of a shared
staging server) and is legitimate when the target serves it by its id; an item of someone else
that was known to exist (listed before the run, or read back) and is no longer listed must be no
longer readable either (its writer deleted it). Those reads are bounded: at most ``FOREIGN_READS``
a list, the rest judged at a later list; what was read back is remembered (``Others``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass, field

FOREIGN_READS = 3
"""Reads by id one list's judgement spends on items the run did not write."""


@dataclass(slots=True)
class Others:
    """What a run knows of the items others wrote (a model's ledger keeps one for each list)."""

    held: set[str] = field(default_factory=set)
    """Known to exist: listed before the run began, or read back by id since."""
    gone: set[str] = field(default_factory=set)
    """Known to exist once, then read back by id and not found: deleted by their writer."""


@dataclass(frozen=True, slots=True)
class Listing:
    """One list judged against the run's history and what it knows of others' items."""

    missing: list[str]
    """Created by the run, not deleted, not listed."""
    deleted: list[str]
    """Deleted by the run, still listed."""
    twice: list[str]
    unexplained: list[str]
    """Listed, not written by the run, and not readable by its id."""
    lost: list[str]
    """Others' items known to exist, not listed, yet still readable by id."""
    arrivals: int
    """Others' items this list showed first (their count may differ from a total read earlier in a walk)."""
    expected: int
    """How many items the list should hold: what it showed of others', the run's own that are not
    deleted, and others' that it did not show but that were not read back as deleted."""

    @property
    def ok(self) -> bool:
        return not (self.missing or self.deleted or self.twice or self.unexplained or self.lost)

    def problems(self, noun: str, created: str = "created in this run") -> str:
        """The failures as one sentence's parts ("" when there are none)."""
        parts = []
        if self.missing:
            parts.append(f"lacks {len(self.missing)} {noun}(s) {created} {self.missing[:3]}")
        if self.lost:
            parts.append(f"lacks {len(self.lost)} that still read by id {self.lost[:3]}")
        if self.deleted:
            parts.append(f"lists {len(self.deleted)} this run deleted {self.deleted[:3]}")
        if self.twice:
            parts.append(f"lists {self.twice[:3]} more than once")
        if self.unexplained:
            parts.append(f"lists {self.unexplained[:3]} that no one created: neither this run nor any that reads by id")
        return ", ".join(parts)


def judge_listing(
    ids: Sequence[str],
    *,
    live: Iterable[str],
    deleted: Iterable[str] = (),
    others: Others,
    readable: Callable[[str], bool],
    relist: Callable[[], Collection[str] | None] | None = None,
    reads: int = FOREIGN_READS,
) -> Listing:
    """``ids``: the list as served (every page); ``live``: what the run created and did not
    delete; ``deleted``: what it deleted; ``readable(id)``: whether the target serves that item
    by its id (one request); ``relist()``: the list's ids read again, asked once and only when an
    item of someone else did not read back (its writer may have deleted it between the list and
    the read: then the list read again no longer shows it). Updates ``others`` with what it read."""
    counts = Counter(ids)
    alive, dead = list(live), list(deleted)
    own = set(alive) | set(dead)
    new = [i for i in counts if i not in own and i not in others.held]
    absent = sorted(i for i in others.held if i not in counts and i not in own)
    unexplained: list[str] = []
    for item in new[:reads]:
        if readable(item):
            others.held.add(item)
        else:
            unexplained.append(item)
    if unexplained and relist is not None:
        again = relist()
        if again is not None:
            unexplained = [i for i in unexplained if i in again]
    checked = absent[: max(0, reads - len(new))]
    lost: list[str] = []
    for item in checked:
        if readable(item):
            lost.append(item)
        else:  # its writer deleted it
            others.held.discard(item)
            others.gone.add(item)
    shown_others = len([i for i in counts if i not in own and i not in unexplained])
    expected = shown_others + len(alive) + len(lost) + len(absent) - len(checked)
    return Listing(
        missing=[i for i in alive if i not in counts],
        deleted=[i for i in dead if i in counts],
        twice=[i for i, n in counts.items() if n > 1],
        unexplained=unexplained,
        lost=lost,
        arrivals=len(new) - len(unexplained),
        expected=expected,
    )


def known(listed: Collection[str]) -> Others:
    """What a run knows of others' items when it begins: those listed before it."""
    return Others(held=set(listed))
