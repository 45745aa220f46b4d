"""The deal of a run's units to shards: complete, disjoint, balanced and the same everywhere."""

from __future__ import annotations

import pytest

from conformance.engine.runner import run
from conformance.run.options import RunOptions
from conformance.run.plan import plan
from conformance.run.shards import (
    CASE_MS,
    MODEL_CALL_MS,
    MODEL_CHUNK,
    STATEFUL,
    STREAMED_CASE_MS,
    Shard,
    Unit,
    chunk_of,
    chunk_seed,
    deal,
    model_units,
    schema_units,
)
from conformance.run.suites import suite
from specs.documents import PROTOCOLS, load


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


def _weights(protocol: str, max_examples: int = 100) -> dict[str, float]:
    return {u.key: u.weight for u in schema_units(load(protocol), max_examples, suite(protocol).streaming_operations)}


def test_a_stage_weighs_its_expected_cases_times_what_a_case_of_it_costs() -> None:
    ap = _weights("agent-protocol")
    assert ap["fuzzing POST /ap/v1/agent/tasks"] == 100 * CASE_MS["fuzzing"]
    assert ap["examples POST /ap/v1/agent/tasks"] == 2 * CASE_MS["examples"]
    # an answer that streams is read and judged frame by frame: the suite's declared streaming
    # operation (NeuroSan's chat) and a documented text/event-stream answer (SGR's) alike
    ns, sgr = _weights("neuro-san"), _weights("sgr-agent-core")
    assert ns["fuzzing POST /api/v1/{agent_name}/streaming_chat"] == 100 * STREAMED_CASE_MS
    assert ns["fuzzing GET /api/v1/{agent_name}/function"] == 100 * CASE_MS["fuzzing"]
    assert sgr["fuzzing POST /v1/chat/completions"] == 100 * STREAMED_CASE_MS
    # an operation that takes no input at all is fuzzed with one case, whatever --max-examples
    assert sgr["fuzzing GET /health"] == CASE_MS["fuzzing"]


def test_the_stateful_stage_weighs_its_cases_only_where_an_answer_names_another_operations_path() -> None:
    # Agent Protocol's task_id, SGR's agent_id (answered by the chat, taken by /agents/{agent_id}/...),
    # Synapse's sessionId: schemathesis has links to follow; NeuroSan's agent_name is never answered
    for protocol in ("agent-protocol", "sgr-agent-core", "synapse-agent"):
        assert _weights(protocol)[STATEFUL] == 6 * 100 * CASE_MS[STATEFUL], protocol
    assert _weights("neuro-san")[STATEFUL] == CASE_MS[STATEFUL]


def test_a_model_range_weighs_its_calls() -> None:
    (unit,) = model_units(5, steps=10, calls_per_step=3)
    assert unit.weight == 5 * 10 * 3 * MODEL_CALL_MS


@pytest.mark.parametrize("protocol", sorted(p for p in PROTOCOLS if suite(p).model is not None))
def test_a_models_declared_calls_per_step_is_what_its_sequences_send(protocol: str) -> None:
    """The deal weighs the model's ranges by ``Model.calls_per_step``: counted here, against the
    mock, within a factor of two (what a step reads grows with what the target holds)."""
    model = suite(protocol).model
    assert model is not None
    result = run(RunOptions(protocol, phases=("model",), model_sequences=10))
    sent = int(result.stats["model_requests"]) / (10 * model.steps)
    assert model.calls_per_step / 2 <= sent <= model.calls_per_step * 2, sent
