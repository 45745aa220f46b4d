"""The model engine against a toy list server: verdicts, shrunk evidence, muting, the budget."""

from __future__ import annotations

import json
from typing import Any

import httpx
from hypothesis import strategies as st
from hypothesis.stateful import rule

from conformance.check.http import Client, Limits
from conformance.check.model import Found, Model, ModelMachine, Session
from conformance.phases.model.engine import ModelTally, _finding, model_verdicts, run_model_phase, shrink_budget
from conformance.verdicts.requirements import Level, Requirement
from conformance.verdicts.results import Status
from specs.documents import load

LIST = Requirement("TOY-MODEL-001", Level.MUST, "the list holds everything created", "toy", "toy", "model")
ECHO = Requirement("TOY-MODEL-002", Level.MUST, "a create answer echoes the name", "toy", "toy", "model")


def toy_server(
    keep: int | None = None,
    echo_breaks_at: int | None = None,
    gone_after: int | None = None,
    garbage_after: int | None = None,
    stall_after: int | None = None,
    served: list[int] | None = None,
) -> httpx.MockTransport:
    """A list of names; ``keep`` drops the oldest beyond that many, ``echo_breaks_at`` garbles echoes,
    ``gone_after`` refuses every connection after that many requests, ``garbage_after`` answers
    bodies that are not JSON (invalid UTF-8) after that many."""
    items: list[str] = ["held-before"]
    served = served if served is not None else [0]

    def handle(request: httpx.Request) -> httpx.Response:
        served[0] += 1
        if gone_after is not None and served[0] > gone_after:
            raise httpx.ConnectError("connection refused", request=request)
        if stall_after is not None and served[0] > stall_after:
            raise httpx.ReadTimeout("timed out", request=request)  # what a stalled answer becomes
        if garbage_after is not None and served[0] > garbage_after:
            return httpx.Response(200, content=b"\xff\xfe{not json", headers={"Content-Type": "application/json"})
        if request.method == "POST":
            name = json.loads(request.content)["name"]
            items.append(name)
            if keep is not None:
                del items[:-keep]
            echoed = name.upper() if echo_breaks_at is not None and len(items) >= echo_breaks_at else name
            return httpx.Response(200, json={"name": echoed})
        return httpx.Response(200, json={"items": items})

    return httpx.MockTransport(handle)


class ToyModel(ModelMachine):
    @rule(name=st.sampled_from(["a", "b", "c"]))
    def create(self, name: str) -> None:
        answer = self.session.request("POST", "/items", json={"name": name}).json()
        self.session.check(ECHO.id, answer["name"] == name, f"echoed {answer['name']!r} for {name!r}")
        self.session.ledger.append(name)
        listed = self.session.request("GET", "/items").json()["items"]
        self.session.check(LIST.id, listed == self.session.ledger, f"listed {listed}, created {self.session.ledger}")


def prepare(session: Session) -> Any:
    return list(session.request("GET", "/items").json()["items"])


def run(
    transport: httpx.MockTransport, requirements: list[Requirement], budget: float = 60.0, seed: int = 0
) -> dict[str, Any]:
    client = Client("http://toy", Limits(), transport=transport)
    results, tally = run_model_phase(
        Model(ToyModel, prepare, steps=6),
        requirements,
        client,
        spec=load("agent-protocol"),
        seed_value=seed,
        ranges=[(0, 20)],
        budget_s=budget,
    )
    return {"stats": tally.stats(), **{r.requirement.id: r for r in results}}


def test_a_faithful_server_passes_with_the_comparisons_counted() -> None:
    out = run(toy_server(), [LIST, ECHO])
    assert out[LIST.id].status is Status.PASSED and out[LIST.id].cases > 0
    assert out[ECHO.id].status is Status.PASSED


def test_a_list_that_drops_its_oldest_fails_with_a_shrunk_sequence_and_curl_lines() -> None:
    out = run(toy_server(keep=3), [LIST, ECHO])
    failed = out[LIST.id]
    assert failed.status is Status.FAILED
    # Earlier sequences already filled the server, so one create and its read are the minimal
    # sequence; the ledger, not the sequence, knows the list must hold everything created before.
    assert "minimal sequence (2 calls, against a target that also holds what earlier" in failed.message
    assert failed.message.count("curl -sS -i -X POST") == 1 and '--data-binary \'{"name":"a"}\'' in failed.message
    assert "created ['held-before', 'a'" in failed.message
    assert len(failed.evidence) == 2
    [finding] = failed.findings
    assert finding.key.startswith("TOY-MODEL-001|GET /items|model:") and finding.deciding == failed.evidence[-1]
    assert out[ECHO.id].status is Status.PASSED  # muted LIST, looked on, found nothing else


def test_after_a_failure_the_run_goes_on_to_find_the_others() -> None:
    out = run(toy_server(keep=3, echo_breaks_at=2), [LIST, ECHO])
    assert out[LIST.id].status is Status.FAILED and out[ECHO.id].status is Status.FAILED
    assert out["stats"]["model_runs"] >= 2


def test_the_same_seed_gives_the_same_verdicts_and_evidence() -> None:
    first, second = (run(toy_server(keep=2), [LIST], seed=3)[LIST.id] for _ in range(2))
    assert first.message == second.message


class Threshold(ModelMachine):
    """A failure whose minimal sequence takes the shrinker many replays: one create of a number
    past 5000, the smallest being 5000 itself."""

    @rule(n=st.integers(0, 10_000))
    def create(self, n: int) -> None:
        self.session.request("POST", "/items", json={"name": str(n)})
        self.session.check(ECHO.id, n < 5000, f"sent {n}, past 5000")


def test_shrinking_a_failure_replays_at_most_its_budget_of_sequences() -> None:
    """The default run's budget (``shrink_budget(5)``) cuts shrinking short and reports the smallest
    failing sequence seen; a deep run's (40 sequences) shrinks it to the minimum, which took the
    shrinker 58 replays when measured; so does no budget at all."""
    outcomes = {}
    for shrinks in (shrink_budget(5), shrink_budget(40), None):
        client = Client("http://toy", Limits(), transport=toy_server())
        results, tally = run_model_phase(
            Model(Threshold, prepare, steps=6),
            [ECHO],
            client,
            spec=load("agent-protocol"),
            seed_value=0,
            ranges=[(0, 5)],
            budget_s=60.0,
            shrinks=shrinks,
        )
        [result] = results
        assert result.status is Status.FAILED and result.evidence, result.message
        assert tally.first_failure is not None
        replays = tally.sequences - tally.first_failure - 1  # after the first failing sequence
        outcomes[shrinks] = (replays, result.message.splitlines()[0])
    assert outcomes[shrink_budget(5)][0] == shrink_budget(5) == 10
    assert outcomes[shrink_budget(5)][1] != "sent 5000, past 5000"  # cut short, still a failure
    assert outcomes[shrink_budget(40)][0] > 10 and outcomes[shrink_budget(40)][1] == "sent 5000, past 5000"
    assert outcomes[None] == outcomes[shrink_budget(40)]


def test_a_spent_budget_stops_the_phase_without_a_pass_for_what_was_never_compared() -> None:
    out = run(toy_server(), [LIST], budget=0.0)
    assert out[LIST.id].status is Status.NOT_VERIFIED
    assert out[LIST.id].message.startswith("not verified (budget): ")


def test_a_target_lost_mid_phase_passes_nothing_it_had_not_failed() -> None:
    out = run(toy_server(gone_after=7), [LIST, ECHO])
    for rid in (LIST.id, ECHO.id):
        assert out[rid].status is Status.ERROR and out[rid].cases > 0, out[rid].message  # some comparisons held
        assert "comparisons held" in out[rid].message


def test_an_answer_that_is_not_json_decides_the_phase_with_its_message_never_a_traceback() -> None:
    before = run(toy_server(garbage_after=0), [LIST, ECHO])  # even prepare's first read
    during = run(toy_server(garbage_after=5), [LIST, ECHO])
    for out, words in ((before, "could not read what the target holds"), (during, "the target misbehaved")):
        for rid in (LIST.id, ECHO.id):
            assert out[rid].status is Status.ERROR, out[rid].message
            assert words in out[rid].message and "response body is not valid JSON" in out[rid].message


def test_a_stalled_request_is_not_replayed_by_shrinking() -> None:
    """Each replay of a stalled call would cost the run another timeout: the phase stops at the
    first stall, with the message, and sends nothing more."""
    served = [0]
    out = run(toy_server(stall_after=7, served=served), [LIST, ECHO])
    assert served[0] == 8  # seven answered, the eighth stalled, no replay
    for rid in (LIST.id, ECHO.id):
        assert out[rid].status is Status.ERROR and "the target misbehaved" in out[rid].message, out[rid].message


def test_a_targeted_sequence_finds_what_no_draw_reaches() -> None:
    """The generated names are a, b, c; only a name the draws never make breaks the echo. The
    model's fixed sequence sends it every run, first, and its violation is the evidence."""

    def send_a_long_name(machine: ToyModel) -> None:
        machine.create("a name no draw makes")

    def garbles_long_names() -> httpx.MockTransport:
        items: list[str] = ["held-before"]

        def handle(request: httpx.Request) -> httpx.Response:
            if request.method == "POST":
                name = json.loads(request.content)["name"]
                items.append(name)
                return httpx.Response(200, json={"name": name[:5]})
            return httpx.Response(200, json={"items": items})

        return httpx.MockTransport(handle)

    client = Client("http://toy", Limits(), transport=garbles_long_names())
    for targeted in ((), (send_a_long_name,)):
        results, _ = run_model_phase(
            Model(ToyModel, prepare, steps=6, targeted=targeted),
            [ECHO],
            client,
            spec=load("agent-protocol"),
            seed_value=0,
            ranges=[(0, 20)],
            budget_s=60.0,
        )
        expected = Status.FAILED if targeted else Status.PASSED
        assert results[0].status is expected, results[0].message
    assert "'a nam' for 'a name no draw makes'" in results[0].message


def test_a_targeted_sequence_whose_stream_stalled_still_reports_what_it_broke() -> None:
    """A violation after a stalled stream is Unshrunk (a BaseException): in a fixed sequence it is
    the finding as a Violation is, never an error escaping the phase."""

    def stall_then_send_a_long_name(machine: ToyModel) -> None:
        machine.session.stalled = True  # as an earlier stream of the sequence that stalled leaves it
        machine.create("a name no draw makes")

    def garbles_long_names(request: httpx.Request) -> httpx.Response:
        if request.method == "POST":
            return httpx.Response(200, json={"name": json.loads(request.content)["name"][:5]})
        return httpx.Response(200, json={"items": []})

    results, _ = run_model_phase(
        Model(ToyModel, prepare, steps=6, targeted=(stall_then_send_a_long_name,)),
        [ECHO],
        Client("http://toy", Limits(), transport=httpx.MockTransport(garbles_long_names)),
        spec=load("agent-protocol"),
        seed_value=0,
        ranges=[(0, 20)],
        budget_s=60.0,
    )
    assert results[0].status is Status.FAILED, results[0].message
    assert "'a nam' for 'a name no draw makes'" in results[0].message


def test_a_model_failure_that_says_its_replay_may_not_tell_reaches_its_finding() -> None:
    """``Session.check(..., unsure=WHY)``: the answer showed what calls outside the finding left on
    the server (a conversation another sequence had), so a replay from a fresh state may differ
    whatever the server does: the finding says why (``Finding.unsure``), as a scenario's does."""
    spec = load("neuro-san")
    why = "the new conversation holds questions other calls of the run asked"
    assert _finding(spec, "http://127.0.0.1:1", "NS-MODEL-003", Found("joined", [], unsure=why)).unsure == why
    assert _finding(spec, "http://127.0.0.1:1", "NS-MODEL-003", Found("joined", [])).unsure == ""


CREATE = "TOY-CREATE-001"
"""The toy's create requirement: an answer without the name leaves the model nothing to follow."""
HELD, COUNTED = "holds each item created", "counts them"


class FactModel(ModelMachine):
    """The list requirement with two facts, each judged only over items the run created."""

    @rule(name=st.sampled_from(["a", "b", "c"]))
    def create(self, name: str) -> None:
        answer = self.session.request("POST", "/items", json={"name": name}).json()
        if "name" not in answer:
            self.session.cannot_compare(LIST.id, f"a create answered no name ({CREATE})", by=CREATE)
        else:
            self.session.ledger.append(name)
        listed = self.session.request("GET", "/items").json()["items"]
        mine = [i for i in listed if i != "held-before"]
        created = self.session.ledger[1:]
        self.session.check(LIST.id, mine == created, f"listed {listed}", fact=HELD, over=len(created))
        self.session.check(LIST.id, len(mine) >= len(created), "short", fact=COUNTED, over=len(created))


def run_facts(transport: httpx.MockTransport) -> Any:
    results, tally = run_model_phase(
        Model(FactModel, prepare, steps=6, facts={LIST.id: (HELD, COUNTED)}),
        [LIST],
        Client("http://toy", Limits(), transport=transport),
        spec=load("agent-protocol"),
        seed_value=0,
        ranges=[(0, 20)],
        budget_s=60.0,
    )
    return results[0], tally


def test_a_model_requirement_none_of_whose_facts_was_observed_is_blocked_by_what_removed_them() -> None:
    """Issue 34: the list was read after every create and held (nothing of the run to miss), but no
    item of the run was ever made: no fact of the list was judged, so it is blocked by the create's
    requirement, never passed on comparisons that judged nothing."""

    def nameless(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json={} if request.method == "POST" else {"items": ["held-before"]})

    result, tally = run_facts(httpx.MockTransport(nameless))
    assert tally.compared[LIST.id] > 0 and tally.judged[LIST.id] == []
    assert result.status is Status.BLOCKED and result.blocked_by == CREATE, result.message
    assert result.message.startswith(f"blocked by {CREATE}: a create answered no name")
    assert "comparisons held, none on an item of the run" in result.message


def test_a_model_requirement_whose_facts_were_observed_passes_naming_them() -> None:
    """The passing control: the same model against a faithful server judges both facts."""
    result, tally = run_facts(toy_server())
    assert result.status is Status.PASSED, result.message
    assert sorted(tally.judged[LIST.id]) == sorted([HELD, COUNTED])
    assert f"judging {HELD}, {COUNTED}" in result.message and "not judged" not in result.message


def test_a_tally_from_before_facts_were_judged_still_decides_by_its_comparisons() -> None:
    """A shard's tally written before ``judged`` existed (``--merge`` of older results): its
    comparisons count as its requirement judged, its reasons as plain text."""
    tally = ModelTally.empty([LIST.id, ECHO.id])
    old = {**ModelTally.empty([LIST.id, ECHO.id]).to_dict(), "compared": {LIST.id: 3, ECHO.id: 0}}
    del old["judged"], old["facts"]
    old["unverifiable"] = {ECHO.id: "no echo was read"}
    tally.absorb(old)
    verdicts = {r.requirement.id: r for r in model_verdicts([LIST, ECHO], tally)}
    assert verdicts[LIST.id].status is Status.PASSED
    assert verdicts[ECHO.id].status is Status.NOT_VERIFIED and "no echo was read" in verdicts[ECHO.id].message


def test_a_fact_another_requirements_failure_removed_keeps_its_requirement_from_passing() -> None:
    """Issue 34 (syn-etag-unchanged beside syn-session-read-lag): every read held, but no update
    was ever answered, so the update's fact was never judged. A fact prevented so blocks the
    requirement by its owner; one the draws only never reached leaves a pass that names it."""
    tally = ModelTally.empty([LIST.id])
    tally.compared[LIST.id], tally.judged[LIST.id] = 12, [HELD]
    tally.facts = {LIST.id: [HELD, COUNTED]}
    unreached = {r.requirement.id: r for r in model_verdicts([LIST], tally)}[LIST.id]
    assert unreached.status is Status.PASSED and f"not judged: {COUNTED}" in unreached.message
    tally.prevented = {LIST.id: {COUNTED: {"why": "the count answered 404 (TOY-CREATE-001)", "by": CREATE}}}
    removed = {r.requirement.id: r for r in model_verdicts([LIST], tally)}[LIST.id]
    assert removed.status is Status.BLOCKED and removed.blocked_by == CREATE, removed.message
    assert removed.message == (
        f"blocked by {CREATE}: {COUNTED} was never judged: the count answered 404 (TOY-CREATE-001) "
        f"(12 comparisons of {HELD} held)"
    )
