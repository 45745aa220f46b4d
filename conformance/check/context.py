"""What a check sees: the target, a bounded client, the document, and the verbs of a verdict.

A check passes by returning. It fails by ``ctx.fail``/``ctx.expect*`` (CheckFailed), and is
reported not verified, never passed, by ``ctx.not_verified`` (NotVerified). Inside ``ctx.part()``
a failure is recorded and the check goes on with its next independent part, so a requirement
reports every distinct failure it meets, not only its first.
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Any, NoReturn, Protocol, TypeVar

from specs.documents import Spec
from specs.schemas import SchemaSet

from ..verdicts.findings import operation_named, operation_of
from ..verdicts.results import Blocked as Blocked  # the verdict exceptions, re-exported: checks raise them from here
from ..verdicts.results import CheckFailed as CheckFailed
from ..verdicts.results import Exchange
from ..verdicts.results import NotVerified as NotVerified
from .answer import readable
from .guard import StallGuard
from .http import Client, Limits, Response, StreamingResponse, TargetError
from .judgments import judge
from .shown import body as shown_body
from .shown import shown
from .streams import Frame, FrameError, ndjson_frames, sse_events

T = TypeVar("T")

Shown = Response | StreamingResponse | Exchange | Mapping[str, Any] | Sequence[Any] | None
"""What a verb's ``shown_by`` names: the answer whose judging failed (a response, a stream, an
exchange, or a JSON object or array read from an answer, which knows its answer: ``check/answer.py``),
or a list or tuple of them. A value that knows no answer (a dict the check built) names none."""


def _shown(answers: Shown) -> tuple[Exchange, ...]:
    """The exchanges of ``answers`` (``Shown``)."""
    if isinstance(answers, Exchange):
        return (answers,)
    exchange = getattr(answers, "exchange", None)  # a Response, a stream, an answer's Object or Array
    if isinstance(exchange, Exchange):
        return (exchange,)
    if isinstance(answers, list | tuple):
        return tuple(ex for answer in answers for ex in _shown(answer))
    return ()


@dataclass(frozen=True, slots=True)
class _Failed:
    error: Exception
    evidence: tuple[Exchange, ...] = ()
    """The exchanges that failed it, shown by every check that meets the failure again."""

    def again(self) -> Exception:
        if isinstance(self.error, Blocked):
            return Blocked(self.error.by, f"shared setup failed earlier in this run: {self.error}")
        message = f"shared setup failed earlier in this run: {self.error}"
        shown = [ex for ex in getattr(self.error, "shown_by", ()) if any(ex is e for e in self.evidence)]
        if isinstance(self.error, NotVerified):
            return NotVerified(message, shown_by=shown)
        return CheckFailed(message, shown_by=shown)


JOURNAL = 2000
"""Calls of a phase the journal keeps (``Context.journal``)."""


@dataclass
class Journal:
    """Every call a phase's checks made, oldest first (the latest ``JOURNAL``), and which were a
    failure's own (its probe: the intruder's write another check saw let through), which a later
    finding's replay sends for their effect but never requires to answer as recorded."""

    calls: list[Exchange] = field(default_factory=list)
    failed: set[int] = field(default_factory=set)
    """``id()`` of the calls of a failure's probe, among ``calls``."""

    def add(self, made: Iterable[Exchange], probed: Iterable[Exchange]) -> None:
        self.calls.extend(made)
        self.failed |= {id(ex) for ex in probed}
        if len(self.calls) > JOURNAL:
            del self.calls[:-JOURNAL]
            kept = {id(ex) for ex in self.calls}
            self.failed &= kept


class CheckOptions(Protocol):
    """What a check reads of the run's options (``run.options.RunOptions`` is one): the check kit
    sits beneath the run machinery, so it names only what it uses."""

    @property
    def base_url(self) -> str: ...
    @property
    def token(self) -> str | None: ...
    @property
    def second_token(self) -> str | None: ...
    @property
    def seed(self) -> int: ...
    @property
    def timeout(self) -> float: ...


@dataclass
class Context:
    spec: Spec
    schemas: SchemaSet
    options: CheckOptions
    limits: Limits
    memo_store: dict[str, Any] = field(default_factory=dict)
    guard: StallGuard | None = None
    """The run's stall guard, told by every client of the check (check/guard.py)."""
    journal: Journal = field(default_factory=lambda: Journal())
    """The calls the phase's earlier checks made: a failure here may show what one of them did to
    a shared object (the update another check made to the session a fixture holds), so its
    reproduction is drawn from them too."""
    client: Client = field(init=False)
    _clients: list[Client] = field(default_factory=list, init=False)
    _setup: list[str | None] = field(default_factory=list, init=False)
    _inherited: list[Exchange] = field(default_factory=list, init=False)
    """Owners of the setup steps under way, innermost last (see ``setup``)."""
    failures: list[tuple[str, list[Exchange]]] = field(default_factory=list, init=False)
    """Failures recorded by ``part`` so far: the message and the exchanges that decided it."""
    blocks: list[tuple[Blocked, list[Exchange]]] = field(default_factory=list, init=False)
    """Parts that another requirement's failure left nothing to judge (the check is then blocked)."""
    probes: dict[int, int] = field(default_factory=dict, init=False)
    """Where each failed part's own calls begin among the calls handed over with it, by the
    ``id()`` of its deciding call: a replay requires what came before, and compares the rest."""
    statuses: dict[int, tuple[str, tuple[int, ...]]] = field(default_factory=dict, init=False)
    """The calls whose status alone failed an expectation (``expect_status``), by ``id()``, with
    that failure's message and the statuses it would have accepted: a finding they decide is
    replayed by its statuses only, and reproduced by any status it would not accept."""
    shown: set[int] = field(default_factory=set, init=False)
    """``id()`` of the deciding calls a failure named as showing it (``CheckFailed.shown_by``), not
    inferred from the calls made."""
    judgments: dict[int, tuple[str, str, dict[str, Any]]] = field(default_factory=dict, init=False)
    """The calls a named judgment failed (``judge``), by ``id()``, with that failure's message, the
    judgment's name and its facts: a finding they decide names them, and replay judges again."""

    def __post_init__(self) -> None:
        self.client = self.new_client()

    def new_client(self) -> Client:
        headers = {"Authorization": f"Bearer {self.options.token}"} if self.options.token else {}
        client = Client(self.base_url, self.limits, headers=headers, guard=self.guard)
        self._clients.append(client)
        return client

    def exchanges(self) -> list[Exchange]:
        """Every exchange this check made, across all its clients: the evidence."""
        return self._inherited + self.made()

    def made(self) -> list[Exchange]:
        """The exchanges this check's own clients made (not the fixture's it cites), in the order
        they were sent: the calls of clients that sent at the same moment (``concurrent.at_once``)
        stand among the main client's, so a later call's reproduction sees the race before it."""
        made = [exchange for client in self._clients for exchange in client.log]
        return sorted(made, key=lambda exchange: exchange.started or 0.0)  # stable: ties keep their order

    def record(self, failures: Iterable[tuple[str, list[Exchange]]]) -> None:
        """The check is over: its calls join the journal the later checks' reproductions draw
        from, those of its failures' probes marked (``failures``: its parts' and its own)."""
        probed = [
            ex for _, calls in failures if calls for ex in calls[self.probes.get(id(calls[-1]), len(calls) - 1) :]
        ]
        self.journal.add(self.made(), probed)

    def close(self) -> None:
        for client in self._clients:
            client.close()

    def draws(self, label: str) -> random.Random:
        """Random draws of a check (an unknown id, a bad token) from the run's seed and ``label``
        alone: the same seed sends the same requests, so a recording of one run answers the next
        and the id a finding names is the one the next run sends too. One label, one use: two checks
        sharing an unknown id would share what a faulty server made of it (an upsert by the first)."""
        return random.Random(f"{self.options.seed}/{label}")

    def drawn_id(self, label: str) -> str:
        """A UUID that names nothing (an unknown task, agent, session): see ``draws``."""
        return str(uuid.UUID(int=self.draws(label).getrandbits(128), version=4))

    @property
    def base_url(self) -> str:
        return self.options.base_url.rstrip("/")

    @property
    def token(self) -> str | None:
        return self.options.token

    @property
    def second_token(self) -> str | None:
        return self.options.second_token

    # setup ------------------------------------------------------------------------------------
    @contextmanager
    def setup(self, owner: str | None) -> Iterator[None]:
        """A step that gives a check something to work on (a task, a session, a finished job),
        whose correctness requirement ``owner`` judges.

        Inside it the verbs tolerate what ``owner`` or another requirement owns whenever the
        check can still proceed: any 2xx where a 2xx was expected, an undocumented content type
        or a body off its schema (the fields the step needs are still checked). When it cannot
        proceed, the check is blocked by ``owner`` rather than failed. ``None`` is the check's own
        step: nothing is tolerated (a helper shared by the owner and the others takes an owner)."""
        self._setup.append(owner)
        try:
            yield
        except (CheckFailed, TargetError) as exc:
            if owner is None:
                setattr(exc, "own", True)  # noqa: B010  # the check's own verdict: no outer setup blocks it
                raise
            if getattr(exc, "own", False):
                raise
            raise Blocked(owner, f"{owner}'s step failed: {exc}", shown_by=getattr(exc, "shown_by", ())) from None
        finally:
            self._setup.pop()

    @property
    def in_setup(self) -> bool:
        """Inside a setup step of another requirement (and not in the check's own step within it)."""
        return bool(self._setup) and self._setup[-1] is not None

    @contextmanager
    def part(self, label: str = "") -> Iterator[None]:
        """One independent part of the check (one route, one bad body, one variant of a stream): a
        failure inside it is recorded with the exchanges the part made, and the check goes on with
        the next part; the requirement fails with every failure recorded. A part blocked by another
        requirement is noted and the check goes on too: it is blocked unless it failed. A part inside another
        requirement's setup step records nothing: that failure is the step's owner's (blocked).
        ``label`` names the part in the message (``"GET session: expected HTTP 404, got 200"``)."""
        if self.in_setup:
            yield
            return
        mark = len(self.exchanges())
        try:
            yield
        except CheckFailed as exc:
            message = f"{label}: {exc}" if label else str(exc)
            # every call so far, up to the one whose answer broke the rule (the one it names)
            self.failures.append((message, self._probed(message, mark, exc.shown_by)))
        except Blocked as exc:  # this part cannot be judged; the others still can
            self.blocks.append((exc, self._probed(str(exc), mark, exc.shown_by)))

    def _probed(self, message: str, mark: int, shown: Iterable[Exchange] = ()) -> list[Exchange]:
        """The calls up to the one a part's failure judged, noting where the part's own began."""
        calls = self.exchanges()[: self.deciding(message, mark, shown) + 1]
        if calls:
            self.probes[id(calls[-1])] = min(mark, len(calls) - 1)
        return calls

    def deciding(self, message: str, mark: int = 0, shown: Iterable[Exchange] = ()) -> int:
        """Index (in ``exchanges()``) of the call whose answer a failure judged: the latest of the
        ones it names (``shown``, ``CheckFailed.shown_by``); when it names none, a guess: the last
        call made since ``mark``, and when none was, the latest call of the operation the message
        names first (``createAgentTask answer: ...`` judged the create, not the read after it)."""
        answers = list(shown)
        for exchange in answers:
            self.cite(exchange)  # a fixture's answer it judged becomes part of its evidence
        made = self.exchanges()
        at = [n for n, ex in enumerate(made) if any(ex is s for s in answers)]
        if at:
            self.shown.add(id(made[max(at)]))
            return max(at)
        if len(made) > mark or not made:
            return len(made) - 1
        named = operation_named(self.spec, message)
        if named is not None:
            for n in range(len(made) - 1, -1, -1):
                ex = made[n]
                if operation_of(self.spec, self.base_url, ex.method, ex.url) == named:
                    return n
        return len(made) - 1

    # verdicts -----------------------------------------------------------------------------
    # ``shown_by``: the answer(s) whose judging failed, when it is not the last call the check made
    # (read A, call B, judge A): the finding, its curl line and its script then end with A.
    def fail(self, message: str, shown_by: Shown = None) -> NoReturn:
        raise CheckFailed(message, shown_by=_shown(shown_by))

    def not_verified(self, reason: str, shown_by: Shown = None) -> NoReturn:
        raise NotVerified(reason, shown_by=_shown(shown_by))

    def expect(self, condition: object, message: str, shown_by: Shown = None) -> None:
        if not condition:
            raise CheckFailed(message, shown_by=_shown(shown_by))

    def cite(self, exchange: Exchange) -> None:
        """Make an exchange another check made (a shared fixture's) part of this check's evidence."""
        if not any(exchange is e for e in self.exchanges()):
            self._inherited.append(exchange)

    def expect_status(self, response: Response | StreamingResponse, *expected: int) -> None:
        self.cite(response.exchange)
        if self.in_setup and 200 <= response.status < 300 and all(200 <= e < 300 for e in expected):
            return  # another success status is the owner's finding, not the setup's problem
        if response.status not in expected:
            want = " or ".join(map(str, expected))
            data: bytes = getattr(response, "body", b"")  # a stream's body is not read
            body = shown_body(data, response.content_type, 300) if data else ""
            notes = []
            if 300 <= response.status < 400:
                where = response.headers.get("location")
                notes.append(f"a redirect to {shown(where)}; the suite follows no redirects" if where else "a redirect")
            if "retry-after" in response.headers:
                notes.append(f"Retry-After: {response.headers['retry-after']}")
            note = f" ({'; '.join(notes)})" if notes else ""
            message = f"expected HTTP {want}, got {response.status}{note}" + (f": {body}" if body else "")
            self.statuses[id(response.exchange)] = (message, tuple(expected))
            raise CheckFailed(message, shown_by=response.exchange)

    def judge(self, name: str, response: Response, what: str = "", **facts: Any) -> None:
        """``response`` judged by the judgment ``name`` (``check/judgments``) with what the check
        knows (JSON values): its first problem (after ``what``) fails the check, shown by that answer, and the
        finding names the judgment and the facts, so a replay judges today's answer again."""
        self._judge(name, response, what, facts, again=True)

    def judge_by_state(self, name: str, response: Response, what: str = "", **facts: Any) -> None:
        """``judge`` with facts read from the target's state (a count before the writes): a replay
        on another state cannot reuse them, so the finding names no judgment and its replay compares."""
        self._judge(name, response, what, facts, again=False)

    def _judge(self, name: str, response: Response, what: str, facts: dict[str, Any], again: bool) -> None:
        ex = response.exchange
        problems = judge(name, response.seen(), facts)
        if problems:
            message = f"{what} {problems[0]}" if what else problems[0]
            if again:
                self.judgments[id(ex)] = (message, name, dict(facts))
            raise CheckFailed(message, shown_by=ex)

    def expect_equal(self, actual: Any, expected: Any, what: str, shown_by: Shown = None) -> None:
        if actual != expected:
            raise CheckFailed(f"{what}: expected {shown(expected)}, got {shown(actual)}", shown_by=_shown(shown_by))

    def memo(self, key: str, factory: Callable[[], T]) -> T:
        """Share an expensive fixture (a finished job, a task with steps) between checks of a run.

        A failed setup is remembered too: later checks fail (or are not verified) at once with
        the original reason, instead of each waiting out the same stall again."""
        calls = f"{key}\0calls"
        if key not in self.memo_store:
            mark = len(self.exchanges())
            try:
                self.memo_store[key] = factory()
            except (CheckFailed, NotVerified, TargetError, Blocked) as exc:
                made, shown = self.exchanges(), getattr(exc, "shown_by", ())
                last = made[-3:]  # and the answers it names, when earlier
                named = [ex for ex in made[:-3] if any(ex is s for s in shown)]
                self.memo_store[key] = _Failed(exc, (*named, *last))
                raise
            # the calls that made it: part of every later check's evidence, so a finding on the
            # fixture's objects replays from a fresh state (the create before the read)
            self.memo_store[calls] = tuple(self.exchanges()[mark:])
        value = self.memo_store[key]
        if isinstance(value, _Failed):
            self._inherited = list(value.evidence)
            raise value.again()
        for exchange in self.memo_store.get(calls, ()):
            self.cite(exchange)
        return value  # type: ignore[no-any-return]

    # the document -------------------------------------------------------------------------
    def response_spec(self, operation_id: str, status: int) -> Mapping[str, Any] | None:
        return self.spec.response(operation_id, status)

    def validate(self, schema: Mapping[str, Any], instance: Any, what: str, shown_by: Shown = None) -> None:
        if self.in_setup:
            return  # a setup step checks the fields it needs itself; the schema is another's subject
        problems = self.schemas.violations(schema, instance)
        if problems:
            message = f"{what} does not match the document: " + "; ".join(map(str, problems))
            raise CheckFailed(message, shown_by=_shown(shown_by))

    def validate_component(self, name: str, instance: Any, what: str, shown_by: Shown = None) -> None:
        self.validate({"$ref": f"#/components/schemas/{name}"}, instance, what, shown_by)

    def conforms(self, response: Response, operation_id: str, *expected: int, judge: bool = True) -> Any:
        """Status expected (and documented), JSON body valid: returns the body, read as the document
        says it comes whatever its label (the Content-Type is the generic content-type requirement's
        fact, ``<PREFIX>-SCHEMA-003``, owned once: one wrong label fails that requirement alone).

        ``judge=False`` reads a body whose form another requirement owns (a list a round-trip
        check needs, a page a traversal check reads): the status still counts, the schema is left
        to its owner. A setup step reads every body that way."""
        if expected:
            self.expect_status(response, *expected)
        lenient = self.in_setup or not judge
        spec = self.response_spec(operation_id, response.status)
        if lenient and response.status not in expected:
            # read a tolerated status's body as the expected one's (a 201 for a 200 still holds a task)
            spec = next((s for s in (self.response_spec(operation_id, e) for e in expected) if s), spec)
        if spec is None:
            self.fail(f"{operation_id}: status {response.status} is not documented", response)
        content = spec.get("content") or {}
        if not content:
            return None
        media = response.content_type
        if media not in content:
            # the label is <PREFIX>-SCHEMA-003's fact, judged on every answer; this check judges what
            # the body holds, read as the document says it comes (a JSON body unlabelled is still JSON)
            media = next(iter(content))
        schema = content[media].get("schema")
        if "json" not in media:
            return response.body
        body = response.json()
        if schema is not None and not lenient:
            self.validate(schema, body, f"{operation_id} {response.status} body", response)
        return body

    # streams ------------------------------------------------------------------------------
    def frames(self, stream: StreamingResponse, kind: str, end: str | None = None) -> Iterator[Frame]:
        """The stream's frames as they arrive; ``end`` (SSE): the terminating event's data, after
        which reading stops and the stream counts as ended (``streams.sse_events``)."""
        try:
            frames = (
                ndjson_frames(stream.chunks(), self.limits.max_frames)
                if kind == "ndjson"
                else sse_events(stream.chunks(), self.limits.max_frames, end=end)
            )
            for frame in frames:
                # each frame's JSON read as an answer's is (check/answer.py), in the stream's exchange
                yield replace(frame, value=readable(frame.value, stream.exchange, f"frame {frame.index + 1}"))
                if kind != "ndjson" and end is not None and frame.raw == end:
                    stream.finished()
        except FrameError as exc:
            raise CheckFailed(str(exc), shown_by=stream.exchange) from None
