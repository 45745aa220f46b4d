"""The deal of a run's units to shards: complete, disjoint, balanced and the same everywhere."""

from __future__ import annotations

import pytest

from conformance.run.options import RunOptions
from conformance.run.plan import plan
from conformance.run.shards import MODEL_CHUNK, Shard, Unit, chunk_of, chunk_seed, deal, model_units


def test_shard_parsing_refuses_what_is_not_k_of_n() -> None:
    assert Shard.parse("2/4") == Shard(2, 4) and str(Shard.parse("1/1")) == "1/1"
    for bad in ("0/4", "5/4", "2", "a/b", "2/0", "-1/2"):
        with pytest.raises(ValueError):
            Shard.parse(bad)


@pytest.mark.parametrize("count", [1, 2, 3, 4, 7])
def test_every_unit_goes_to_exactly_one_shard_whatever_n(count: int) -> None:
    units = plan(RunOptions("agent-protocol", max_examples=100, model_sequences=40)).units
    shares = deal(units, count)
    names = [u.name for share in shares for u in share]
    assert sorted(names) == sorted(u.name for u in units) and len(set(names)) == len(names)
    # the deal is a function of the units and N alone: computed again, it is the same
    assert shares == deal(units, count)
    # heaviest-first to the lightest: no shard carries more than the lightest plus the heaviest unit
    loads = [sum(u.weight for u in share) for share in shares]
    assert max(loads) <= min(loads) + max(u.weight for u in units)


def test_a_shards_plan_keeps_its_scenarios_and_the_phases_it_has_units_of() -> None:
    whole = plan(RunOptions("neuro-san", max_examples=100, model_sequences=40))
    parts = [plan(RunOptions("neuro-san", max_examples=100, model_sequences=40, shard=Shard(k, 3))) for k in (1, 2, 3)]
    assert sorted(u.name for p in parts for u in p.units) == sorted(u.name for u in whole.units)
    for part in parts:
        scenarios = {c.requirement.id for c in part.phase("scenario")}
        assert scenarios == set(part.units_of("scenario"))
        for phase in ("schema", "model"):
            assert bool(part.phase(phase)) == bool(part.units_of(phase))
    # every scenario requirement of the run is decided by exactly one shard
    decided = [c.requirement.id for p in parts for c in p.phase("scenario")]
    assert sorted(decided) == sorted(c.requirement.id for c in whole.phase("scenario"))


def test_model_ranges_cover_the_sequences_once_and_the_first_keeps_the_runs_seed() -> None:
    units = model_units(23, steps=8)
    ranges = [chunk_of(u) for u in units]
    assert sum(n for _, n in ranges) == 23 and all(n <= MODEL_CHUNK for _, n in ranges)
    assert [first for first, _ in ranges] == list(range(0, 23, MODEL_CHUNK))
    assert chunk_seed(7, 0) == 7  # a default run (one range) draws what it always drew
    assert len({chunk_seed(7, first) for first, _ in ranges}) == len(ranges)
    assert chunk_seed(7, 5) != chunk_seed(8, 5)


def test_units_of_equal_weight_are_dealt_by_name_not_by_arrival() -> None:
    units = [Unit("scenario", f"R-{n}", 1.0) for n in range(6)]
    forward = [sorted(u.name for u in share) for share in deal(units, 2)]
    backward = [sorted(u.name for u in share) for share in deal(list(reversed(units)), 2)]
    assert (
        forward
        == backward
        == [["scenario:R-0", "scenario:R-2", "scenario:R-4"], ["scenario:R-1", "scenario:R-3", "scenario:R-5"]]
    )
