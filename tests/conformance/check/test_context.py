"""Context.memo: shared fixtures, and shared failures that do not make every later check wait again."""

from __future__ import annotations

import pytest

from conformance.check.context import CheckFailed, Context, NotVerified
from conformance.check.http import Limits, TargetError
from conformance.run.options import RunOptions
from specs.documents import load
from specs.schemas import SchemaSet


@pytest.fixture
def ctx() -> Context:
    spec = load("synapse-agent")
    context = Context(spec, SchemaSet(spec.raw), RunOptions(protocol="synapse-agent", timeout=1.0), Limits(timeout=1.0))
    yield context
    context.close()


def test_memo_builds_once(ctx: Context) -> None:
    calls = []
    assert ctx.memo("k", lambda: calls.append(1) or 7) == 7
    assert ctx.memo("k", lambda: calls.append(1) or 8) == 7
    assert calls == [1]


@pytest.mark.parametrize(
    ("error", "later"),
    [
        (CheckFailed("the job did not complete"), CheckFailed),
        (NotVerified("no second user"), NotVerified),
        (TargetError("stream stalled"), CheckFailed),
    ],
)
def test_memo_remembers_a_failed_setup(ctx: Context, error: Exception, later: type[Exception]) -> None:
    calls = []

    def broken() -> None:
        calls.append(1)
        raise error

    with pytest.raises(type(error), match=f"^{error}$"):
        ctx.memo("key", broken)
    with pytest.raises(later, match=f"^shared setup failed earlier in this run: {error}$"):
        ctx.memo("key", broken)
    assert calls == [1]


def test_suite_bugs_are_not_remembered(ctx: Context) -> None:
    with pytest.raises(ZeroDivisionError):
        ctx.memo("key", lambda: 1 / 0)
    assert ctx.memo("key", lambda: 3) == 3


def test_evidence_spans_every_client_of_a_check(ctx: Context) -> None:
    extra = ctx.new_client()
    assert ctx.exchanges() == []
    assert extra in ctx._clients and ctx.client in ctx._clients


def test_response_spec_follows_refs_to_shared_responses() -> None:
    """SGR's 404s are `$ref: '#/components/responses/...'`; a scenario-only run must see their content
    without the schema phase having run (schemathesis once inlined refs in the shared document)."""
    spec = load("sgr-agent-core")
    context = Context(spec, SchemaSet(spec.raw), RunOptions(protocol="sgr-agent-core"), Limits(timeout=1.0))
    try:
        assert "$ref" in spec.operation("getAgentState").definition["responses"]["404"]
        assert "application/json" in context.response_spec("getAgentState", 404)["content"]
    finally:
        context.close()


# --- setup steps: tolerate what another requirement owns, block when the check cannot proceed --------


def _response(ctx: Context, status: int, body: bytes, content_type: str = "application/json") -> object:
    import httpx

    from conformance.check.http import Response
    from conformance.verdicts.results import Exchange

    headers = httpx.Headers({"content-type": content_type})
    return Response(status, headers, body, Exchange("POST", "http://x/", {}, None))


def test_a_setup_step_tolerates_another_success_status_and_a_body_off_its_schema(ctx: Context) -> None:
    created = _response(ctx, 200, b'{"sessionId": "s1", "agentAccessLevel": "NOT_A_LEVEL"}')
    with ctx.setup("SYN-SESS-001"):
        body = ctx.conforms(created, "createAgentSession", 201)  # type: ignore[arg-type]
    assert body["sessionId"] == "s1"
    with pytest.raises(CheckFailed, match="expected HTTP 201, got 200"):
        ctx.conforms(created, "createAgentSession", 201)  # type: ignore[arg-type]


def test_a_setup_step_that_cannot_proceed_blocks_the_check_by_its_owner(ctx: Context) -> None:
    from conformance.check.context import Blocked

    refused = _response(ctx, 500, b'{"reason": "down"}')
    with pytest.raises(Blocked) as caught, ctx.setup("SYN-SESS-001"):
        ctx.conforms(refused, "createAgentSession", 201)  # type: ignore[arg-type]
    assert caught.value.by == "SYN-SESS-001" and "expected HTTP 201, got 500" in str(caught.value)
    with pytest.raises(Blocked, match="stalled"), ctx.setup("SYN-JOB-002"):
        raise TargetError("stalled")


def test_the_checks_own_step_inside_a_setup_stays_strict_and_fails(ctx: Context) -> None:
    off_schema = _response(ctx, 201, b'{"sessionId": 5}')
    with pytest.raises(CheckFailed, match="does not match the document"), ctx.setup("SYN-JOB-001"), ctx.setup(None):
        ctx.conforms(off_schema, "createAgentSession", 201)  # type: ignore[arg-type]


def test_judge_false_reads_a_body_whose_form_another_requirement_owns(ctx: Context) -> None:
    labelled = _response(ctx, 404, b'{"reason": "no such session"}', "text/plain")
    assert ctx.conforms(labelled, "getAgentSession", 404, judge=False) == {"reason": "no such session"}
    with pytest.raises(CheckFailed, match="expected HTTP 403, got 404"):
        ctx.conforms(labelled, "getAgentSession", 403, judge=False)  # type: ignore[arg-type]


def test_a_label_is_the_content_type_requirements_and_the_body_is_still_read(ctx: Context) -> None:
    """One fact, one owner: a JSON body labelled otherwise (or not at all) is read as the document
    says it comes, for the facts it holds; the label fails <PREFIX>-SCHEMA-003 alone."""
    labelled = _response(ctx, 404, b'{"reason": "no such session"}', "text/plain")
    assert ctx.conforms(labelled, "getAgentSession", 404) == {"reason": "no such session"}
    unlabelled = _response(ctx, 404, b'{"reason": "gone"}', "")
    assert ctx.conforms(unlabelled, "getAgentSession", 404)["reason"] == "gone"
    with pytest.raises(CheckFailed, match="does not match the document"):
        ctx.conforms(_response(ctx, 404, b'{"reason": 5}', "text/plain"), "getAgentSession", 404)  # type: ignore[arg-type]


def test_a_blocked_check_names_its_blocker_and_the_blocker_itself_fails(ctx: Context) -> None:
    from conformance.check.context import Blocked
    from conformance.phases.scenario import run_check
    from conformance.verdicts.requirements import Check, Level, Requirement
    from conformance.verdicts.results import Status

    def blocked(c: Context) -> None:
        raise Blocked("SYN-SESS-001", "SYN-SESS-001's step failed: no sessionId")

    def make(rid: str) -> Check:
        return Check(Requirement(rid, Level.MUST, "s", "r", "synapse-agent"), blocked)

    other = run_check(make("SYN-HIST-001"), ctx)
    assert other.status is Status.BLOCKED and other.blocked_by == "SYN-SESS-001" and not other.findings
    assert other.message.startswith("blocked by SYN-SESS-001: ")
    own = run_check(make("SYN-SESS-001"), ctx)
    assert own.status is Status.FAILED and own.blocked_by is None and len(own.findings) == 1


def test_a_failing_part_is_recorded_and_the_check_goes_on(ctx: Context) -> None:
    from conformance.check.context import Blocked
    from conformance.phases.scenario import run_check
    from conformance.verdicts.requirements import Check, Level, Requirement
    from conformance.verdicts.results import Status

    reached = []

    def three_parts(c: Context) -> None:
        for n in (1, 2, 3):
            with c.part(f"part {n}"):
                c.expect(n == 2, f"value {n} is wrong")
                reached.append(n)
        reached.append("end")

    res = run_check(Check(Requirement("SYN-X-001", Level.MUST, "s", "r", "synapse-agent"), three_parts), ctx)
    assert reached == [2, "end"]
    assert res.status is Status.FAILED
    # the same failure in two parts is one finding counted twice (the digest blanks the numbers)
    assert [(f.message, f.count) for f in res.findings] == [("part 1: value 1 is wrong", 2)]

    def distinct(c: Context) -> None:
        with c.part():
            c.fail("no sessionId")
        with c.part():
            c.fail("agentAccessLevel missing")
        c.not_verified("no second user")

    fresh = Context(ctx.spec, ctx.schemas, ctx.options, ctx.limits)
    res = run_check(Check(Requirement("SYN-X-002", Level.MUST, "s", "r", "synapse-agent"), distinct), fresh)
    assert res.status is Status.FAILED and len(res.findings) == 2
    assert res.message == (
        "2 distinct failures: (1) no sessionId; (2) agentAccessLevel missing; then not verified: no second user"
    )

    # inside another requirement's setup a part records nothing: the step's owner blocks the check
    def in_setup(c: Context) -> None:
        with c.setup("SYN-SESS-001"), c.part():
            c.fail("no sessionId")

    fresh = Context(ctx.spec, ctx.schemas, ctx.options, ctx.limits)
    with pytest.raises(Blocked):
        in_setup(fresh)
    assert fresh.failures == []
    fresh.close()


def test_a_blocked_part_leaves_the_others_judged_and_the_check_blocked(ctx: Context) -> None:
    from conformance.phases.scenario import run_check
    from conformance.verdicts.requirements import Check, Level, Requirement
    from conformance.verdicts.results import Status

    def lists(c: Context) -> None:
        for owner in ("SYN-PAGE-001", None):
            with c.part(), c.setup(owner):
                c.fail("the list does not page")  # blocked by its owner, then the check's own failure

    res = run_check(Check(Requirement("SYN-X-003", Level.MUST, "s", "r", "synapse-agent"), lists), ctx)
    assert res.status is Status.FAILED and res.message == "the list does not page; a part was blocked by SYN-PAGE-001"

    def only_blocked(c: Context) -> None:
        with c.part(), c.setup("SYN-PAGE-001"):
            c.fail("the list does not page")
        with c.part():
            c.expect(True, "holds")

    fresh = Context(ctx.spec, ctx.schemas, ctx.options, ctx.limits)
    res = run_check(Check(Requirement("SYN-X-004", Level.MUST, "s", "r", "synapse-agent"), only_blocked), fresh)
    assert res.status is Status.BLOCKED and res.blocked_by == "SYN-PAGE-001" and not res.findings
    # a part blocked by the check's own step is its own failure
    fresh = Context(ctx.spec, ctx.schemas, ctx.options, ctx.limits)
    res = run_check(Check(Requirement("SYN-PAGE-001", Level.MUST, "s", "r", "synapse-agent"), only_blocked), fresh)
    assert res.status is Status.FAILED and len(res.findings) == 1


def test_a_failure_on_the_status_alone_is_a_finding_that_judged_the_status() -> None:
    """A part failed by ``expect_status`` (a 200 where a 401 was due) judged nothing but the status:
    its finding says so, and a replay compares statuses only; a part that judged the body does not."""
    from conformance.phases.scenario import run_check
    from conformance.verdicts.reproduction import STATUS
    from conformance.verdicts.requirements import Check, Level, Requirement
    from mockserver import EmbeddedServer, MockConfig

    spec = load("synapse-agent")

    def two_parts(c: Context) -> None:
        with c.part("status"):
            c.expect_status(c.client.post("/agent/sessions/list", json={}), 401)
        with c.part("body"):
            c.expect_status(c.client.post("/agent/sessions/list", json={}, auth=""), 401)
            c.fail("the 401's body is not an ErrorResponse")

    with EmbeddedServer(MockConfig(protocols=("synapse-agent",))) as server:
        options = RunOptions(
            protocol="synapse-agent", base_url=server.url + spec.info.base_path, token="alice-token", timeout=5.0
        )
        context = Context(spec, SchemaSet(spec.raw), options, Limits(timeout=5.0))
        res = run_check(Check(Requirement("SYN-X-005", Level.MUST, "s", "r", "synapse-agent"), two_parts), context)
    judged = {f.message.split(":", 1)[0]: f.judged for f in res.findings}
    assert judged == {"status": STATUS, "body": ""}
    assert res.findings[0].to_dict()["judged"] == STATUS


def test_a_failure_judging_an_earlier_answer_is_filed_under_that_answer() -> None:
    """Read A, call B (answered as the document says), then fail judging A's body: the finding, its
    curl line and its reproduction end with A, the answer the failure names (``shown_by``), not
    with B, the last call made (whose curl line a vendor would run and see pass). Both inside a
    part and as the failure that ends the check."""
    from conformance.phases.scenario import run_check
    from conformance.verdicts.requirements import Check, Level, Requirement
    from mockserver import EmbeddedServer, MockConfig

    spec = load("synapse-agent")

    def judged_late(c: Context, mode: str) -> None:
        created = c.client.post("/agent/session", json={"agentAccessLevel": "PUBLICLY_ACCESSIBLE"})
        c.expect_status(created, 201, 200)
        read = c.client.get(f"/agent/session/{created.json()['sessionId']}")  # A
        session = read.json()
        c.expect_status(c.client.post("/agent/sessions/list", json={}), 200)  # B, as documented
        if mode == "part":
            with c.part("session read"):
                c.expect(session.get("no such field"), "the session has no field 'no such field'", shown_by=read)
        elif mode == "json":  # the JSON read from A knows its answer
            c.expect_equal(session.get("agentAccessLevel"), "WRITE", "agentAccessLevel", shown_by=session)
        else:
            c.fail("the session has no field 'no such field'", shown_by=read)

    with EmbeddedServer(MockConfig(protocols=("synapse-agent",))) as server:
        options = RunOptions(
            protocol="synapse-agent", base_url=server.url + spec.info.base_path, token="alice-token", timeout=5.0
        )
        for n, mode in enumerate(("part", "end", "json")):
            context = Context(spec, SchemaSet(spec.raw), options, Limits(timeout=5.0))
            req = Requirement(f"SYN-X-01{n}", Level.MUST, "s", "r", "synapse-agent")
            res = run_check(Check(req, lambda c, m=mode: judged_late(c, m)), context)
            (finding,) = res.findings
            assert finding.operation == finding.shown_by == "GET /agent/session/{sessionId}", mode
            assert finding.to_dict()["curl"].startswith("curl") and "/agent/session/" in finding.to_dict()["curl"]
            assert "sessions/list" not in finding.to_dict()["curl"]
            assert finding.deciding is not None and finding.deciding.method == "GET"
            assert finding.key.startswith(f"SYN-X-01{n}|GET /agent/session/{{sessionId}}|scenario:")


def test_a_missing_key_of_an_answer_fails_and_one_of_the_suites_own_dict_is_a_suite_error() -> None:
    """What a server sent never ends as "error" (check/answer.py): a key its answer lacks fails the
    check with that answer as the finding's call; a key the suite's own dict lacks is the suite's
    bug, and stays "error"."""
    from conformance.phases.scenario import run_check
    from conformance.verdicts.requirements import Check, Level, Requirement
    from conformance.verdicts.results import Status
    from mockserver import EmbeddedServer, MockConfig

    spec = load("synapse-agent")

    def reads_the_answer(c: Context) -> None:
        session = c.client.post("/agent/session", json={"agentAccessLevel": "PUBLICLY_ACCESSIBLE"}).json()
        c.client.post("/agent/sessions/list", json={})
        session["documentedNowhere"]  # the read a renamed field fails

    def reads_its_own(c: Context) -> None:
        c.client.post("/agent/sessions/list", json={})
        {"mine": 1}["documentedNowhere"]  # the suite's own bug

    with EmbeddedServer(MockConfig(protocols=("synapse-agent",))) as server:
        options = RunOptions(
            protocol="synapse-agent", base_url=server.url + spec.info.base_path, token="alice-token", timeout=5.0
        )
        results = []
        for n, check in enumerate((reads_the_answer, reads_its_own)):
            context = Context(spec, SchemaSet(spec.raw), options, Limits(timeout=5.0))
            results.append(
                run_check(Check(Requirement(f"SYN-X-02{n}", Level.MUST, "s", "r", "synapse-agent"), check), context)
            )
    answer, own = results
    assert answer.status is Status.FAILED and answer.message.startswith('the answer has no "documentedNowhere" at $')
    (finding,) = answer.findings
    assert finding.operation == finding.shown_by == "POST /agent/session"
    assert own.status is Status.ERROR and "KeyError" in own.message


def test_at_once_sends_together_each_on_a_client_of_its_own(ctx: Context) -> None:
    """The sends of ``at_once`` are under way at the same time (each waits here for all the others: sent one
    after another they would break this barrier), on clients (connections) of their own."""
    from threading import Barrier

    from conformance.check.concurrent import AT_ONCE, at_once

    met = Barrier(AT_ONCE, timeout=5)

    def send(client: object) -> int:
        met.wait()
        return id(client)

    used = at_once(ctx, [send] * AT_ONCE)
    assert len(set(used)) == AT_ONCE and id(ctx.client) not in used


def test_at_once_raises_a_send_s_error_once_all_have_ended(ctx: Context) -> None:
    from conformance.check.concurrent import at_once

    ended: list[int] = []

    def send(n: int) -> object:
        def one(client: object) -> int:
            if n == 0:
                raise TargetError("connection reset")
            ended.append(n)
            return n

        return one

    with pytest.raises(TargetError, match="connection reset"):
        at_once(ctx, [send(n) for n in range(4)])
    assert sorted(ended) == [1, 2, 3]
