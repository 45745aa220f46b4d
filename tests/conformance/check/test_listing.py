"""The one rule every model judges a list by when others write to the target too (check/listing.py)."""

from __future__ import annotations

from collections.abc import Callable

from conformance.check.listing import FOREIGN_READS, Others, judge_listing, known


def reader(existing: set[str], reads: list[str]) -> Callable[[str], bool]:
    """Whether an item reads by id, each read recorded."""

    def readable(item: str) -> bool:
        reads.append(item)
        return item in existing

    return readable


def test_the_run_s_own_items_are_held_to_its_history() -> None:
    reads: list[str] = []
    listing = judge_listing(
        ["a", "d", "d"], live=["a", "b"], deleted=["d"], others=Others(), readable=reader(set(), reads)
    )
    assert listing.missing == ["b"] and listing.deleted == ["d"] and listing.twice == ["d"]
    assert not listing.ok and reads == []  # nothing of the run's own is read back: its history decides
    text = listing.problems("task")
    assert "lacks 1 task(s) created in this run ['b']" in text and "this run deleted ['d']" in text


def test_others_items_are_accepted_when_they_read_by_id() -> None:
    others, reads = known({"old"}), []
    listing = judge_listing(
        ["old", "a", "x1", "x2"], live=["a"], others=others, readable=reader({"old", "x1", "x2"}, reads)
    )
    assert listing.ok and listing.arrivals == 2 and listing.expected == 4
    assert sorted(reads) == ["x1", "x2"] and others.held == {"old", "x1", "x2"}
    # known now: not read again
    reads.clear()
    assert judge_listing(["old", "a", "x1", "x2"], live=["a"], others=others, readable=reader(set(), reads)).ok
    assert reads == []


def test_an_item_no_one_created_fails() -> None:
    listing = judge_listing(["a", "ghost"], live=["a"], others=Others(), readable=reader(set(), []))
    assert listing.unexplained == ["ghost"] and not listing.ok
    assert "['ghost'] that no one created" in listing.problems("task")
    # unless the list read again no longer shows it: its writer deleted it between the list and the read
    again = judge_listing(["a", "ghost"], live=["a"], others=Others(), readable=reader(set(), []), relist=lambda: ["a"])
    assert again.ok


def test_others_items_that_vanish_must_be_gone_by_id_too() -> None:
    others = known({"kept", "deleted"})
    listing = judge_listing([], live=[], others=others, readable=reader({"kept"}, []))
    assert listing.lost == ["kept"] and not listing.ok  # a list that dropped an item that exists
    assert others.gone == {"deleted"} and "deleted" not in others.held
    assert listing.expected == 1


def test_reads_are_bounded_per_list() -> None:
    many = [f"x{n}" for n in range(10)]
    reads: list[str] = []
    listing = judge_listing(many, live=[], others=Others(), readable=reader(set(), reads))
    assert len(reads) == FOREIGN_READS and len(listing.unexplained) == FOREIGN_READS
    reads.clear()
    others = known(set(many))
    listing = judge_listing([], live=[], others=others, readable=reader(set(many), reads))
    assert len(reads) == FOREIGN_READS and len(listing.lost) == FOREIGN_READS
    assert listing.expected == len(many)  # the unread ones are taken as still there
