"""The model kit: what a protocol's model (``protocols/<id>/model.py``) is written with.

A model is a Hypothesis ``RuleBasedStateMachine`` (``ModelMachine``) whose rules call the target
through the run's ``Session`` and compare each answer with what the model predicts
(``Session.check``); ``Model`` is what the protocol hands the model-based phase
(``phases/model/``), which drives it and turns what it finds into verdicts.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import partial
from typing import Any, ClassVar

from hypothesis.stateful import RuleBasedStateMachine

from ..verdicts.requirements import Requirement
from ..verdicts.results import Exchange
from .http import Client, Response, TargetError
from .oracle import Window
from .streams import Frame, FrameError, ndjson_frames, sse_events


class Violation(Exception):
    """The target broke a model requirement; raised inside the state machine so Hypothesis shrinks."""

    def __init__(self, rid: str, message: str) -> None:
        super().__init__(f"{rid}: {message}")
        self.rid = rid
        self.message = message


class OutOfTime(BaseException):
    """The phase's time budget ran out: a BaseException, so Hypothesis neither catches nor shrinks it."""


class TargetLost(BaseException):
    """A request of a step stalled, was reset or broke (the ``TargetError`` is its cause): not
    shrunk, since every replay would pay the same timeout again; the phase stops on it."""

    def __init__(self, error: TargetError) -> None:
        super().__init__(str(error))
        self.error = error


class Unshrunk(BaseException):
    """A requirement broken in a sequence that met a stalled or broken stream: that sequence is its
    minimal one (shrinking would replay the stall, a timeout per replay), so Hypothesis is passed by."""

    def __init__(self, rid: str, message: str) -> None:
        super().__init__(f"{rid}: {message}")
        self.rid = rid


class ShrinkSpent(BaseException):
    """Shrinking a failure replayed as many sequences as its bound (``Session.shrink_budget``): the
    smallest failing sequence seen so far is its evidence, so Hypothesis is passed by."""

    def __init__(self, rid: str) -> None:
        super().__init__(rid)
        self.rid = rid


@dataclass(slots=True)
class Call:
    exchange: Exchange
    window: Window


@dataclass(slots=True)
class Streamed:
    """A streamed answer as it arrived: each event's data (or line's object) in order, the JSON
    objects among them, and why reading stopped early (empty when the server ended the stream)."""

    status: int
    headers: dict[str, str]
    content_type: str
    events: list[str] = field(default_factory=list)
    chunks: list[dict[str, Any]] = field(default_factory=list)
    error: str = ""
    body: bytes = b""
    """The whole answer when it was not a 200 stream (an error Status, say)."""
    exchange: Exchange | None = None
    """The call as recorded (its evidence)."""

    @property
    def answer(self) -> str:
        """What came back, in a few words: its status, or why there was none."""
        return f"HTTP {self.status}" if self.status else f"no answer: {self.error}"


HISTORY = 2000
"""Calls of the run a session remembers: a failure may show what an earlier sequence made."""


@dataclass(slots=True)
class Found:
    message: str
    calls: list[Call]
    """The (minimal) sequence that showed it."""
    history: list[Call] = field(default_factory=list)
    """The run's calls up to and including it (the latest ``HISTORY``): the ledger spans sequences,
    so the objects a failing read judged may have been made and changed by earlier ones."""
    also: list[Exchange] = field(default_factory=list)
    """Earlier answers the failing one was compared with (a task read by id, against its item in
    the list): its reproduction keeps and compares them, whichever of the two is wrong."""
    unsure: str = ""
    """Why a replay from a fresh state may answer otherwise whatever the server does (the failing
    answer showed what calls outside the finding left on the server): ``Finding.unsure``."""


SUPPORT = "support"
"""The fact of a comparison that only supports a requirement's facts (a create answering a fresh id
before the list that must hold it is read): it may fail the requirement, it never passes it."""


@dataclass(slots=True)
class Unjudged:
    """Why a requirement's facts were not compared, and the requirement whose failure removed what
    they needed (``Blocked.by``), when one did."""

    why: str
    by: str = ""


class Session:
    """One model run against one target: the bounded client, the run-wide ledger, the verdicts.

    ``check(rid, ok, message)`` is the one verb of a model: it counts a comparison for ``rid``
    and, when the comparison fails and ``rid`` is still being looked for, raises ``Violation``.
    A requirement passes on the facts it judged, never on comparisons alone: ``check`` names the
    fact it judges (``Model.facts``) and how many of the run's items it judged (``over``), so a
    list compared while the run had created nothing for it judged nothing."""

    def __init__(
        self,
        client: Client,
        requirements: list[Requirement],
        deadline: float,
        facts: Mapping[str, tuple[str, ...]] | None = None,
    ) -> None:
        self.client = client
        self.requirements = {r.id: r for r in requirements}
        self.facts = dict(facts or {})
        """Requirement id -> the facts its statement holds (``Model.facts``); one not named has one,
        itself."""
        self.judged: dict[str, set[str]] = {r.id: set() for r in requirements}
        """Requirement id -> the facts a comparison judged (on at least one item of the run)."""
        self.active = set(self.requirements)
        self.deadline = deadline
        self.ledger: Any = None
        """The model's run-wide expectations; each protocol's model decides its shape."""
        self.compared: dict[str, int] = dict.fromkeys(self.requirements, 0)
        self.found: dict[str, Found] = {}
        self.unverifiable: dict[str, Unjudged] = {}
        """Requirement id -> why a comparison could not be made (another requirement's subject)."""
        self.prevented: dict[str, dict[str, Unjudged]] = {}
        """Requirement id -> fact ("" for all of them) -> why a comparison of it could not be made."""
        self.calls: list[Call] = []
        self.history: list[Call] = []
        self.examples = 0
        self.requests = 0
        self.first_failure: int | None = None
        """Sequences begun before the first violation of the run (the read of what the target
        held not counted)."""
        self.stalled = False
        """Whether a stream of the current sequence stalled or broke (its failures are not shrunk)."""
        self.shrink_budget: int | None = None
        """Sequences Hypothesis may replay to shrink a failure once it met one (None: no bound)."""
        self.failing: tuple[str, int] | None = None
        """The requirement of the latest violation of the current Hypothesis run, and the sequence
        that first failed in it: what a spent shrink budget reports."""

    def begin_example(self) -> None:
        failing, budget = self.failing, self.shrink_budget
        if failing is not None and budget is not None and self.examples - failing[1] >= budget:
            raise ShrinkSpent(failing[0])
        self.stalled = False
        self.calls = []
        self.client.log.clear()
        self.examples += 1

    def request(self, method: str, path: str, **kwargs: Any) -> Response:
        if time.monotonic() > self.deadline:
            raise OutOfTime
        start = time.time()
        self.requests += 1
        try:
            response = self.client.request(method, path, **kwargs)
        except TargetError as exc:
            raise TargetLost(exc) from exc
        finally:
            exchange = self.client.log[-1] if self.client.log else None
            if exchange is not None:
                self._called(Call(exchange, Window(start, time.time())))
        return response

    def _called(self, call: Call) -> None:
        self.calls.append(call)
        self.history.append(call)
        if len(self.history) > 2 * HISTORY:
            del self.history[:-HISTORY]

    def sse(self, path: str, body: Any, end: str | None = None) -> Streamed:
        """POST and read a server-sent-event answer to its end (bounded by the client's stream
        budget): the server's close, or ``end``, the terminating event's data (``streams.sse_events``);
        how it ended is part of the answer, never raised."""
        return self._stream(path, body, partial(sse_events, end=end), end=end)

    def ndjson(self, path: str, body: Any, *, read_stream: bool = True, **kwargs: Any) -> Streamed:
        """POST and read a stream of JSON objects, one or more per line, as ``sse`` does.
        ``read_stream=False`` reads only an error answer: a 200 is closed unread (a call that
        wants the error a server should have sent need not wait out a stream it opened instead)."""
        return self._stream(path, body, ndjson_frames if read_stream else None, **kwargs)

    def _stream(
        self,
        path: str,
        body: Any,
        reader: Callable[[Iterable[bytes], int], Iterator[Frame]] | None,
        end: str | None = None,
        **kwargs: Any,
    ) -> Streamed:
        if time.monotonic() > self.deadline:
            raise OutOfTime
        start = time.time()
        self.requests += 1
        out = Streamed(0, {}, "")
        try:
            with self.client.stream("POST", path, **({"json": body} if body is not None else {}), **kwargs) as stream:
                out.status, out.headers, out.content_type = stream.status, dict(stream.headers), stream.content_type
                if stream.status != 200:
                    out.body = stream.read()
                elif reader is not None:  # else a 200 is closed unread
                    for frame in reader(stream.chunks(), self.client.limits.max_frames):
                        out.events.append(frame.raw)
                        if isinstance(frame.value, dict):
                            out.chunks.append(frame.value)
                        if end is not None and frame.raw == end:
                            stream.finished()
        except (TargetError, FrameError) as exc:
            out.error = str(exc)
            self.stalled = self.stalled or isinstance(exc, TargetError)
        finally:
            if self.client.log:
                out.exchange = self.client.log[-1]
                self._called(Call(out.exchange, Window(start, time.time())))
        return out

    def window(self) -> Window:
        """The wall-clock bounds of the latest call."""
        return self.calls[-1].window

    def check(
        self,
        rid: str,
        ok: object,
        message: str | Callable[[], str],
        answer: Response | Streamed | Exchange | None = None,
        also: Iterable[Exchange | None] = (),
        unsure: str = "",
        fact: str = "",
        over: int | None = None,
    ) -> None:
        """``answer``: the one judged, when it is not the latest call's (a state read before a
        listing, a list before the reads by id of the items others wrote): the finding is keyed on
        it, and its reproduction ends with it. ``also``: earlier answers it was compared with
        (``Found.also``). ``unsure``: why its replay may not tell (``Found.unsure``).
        ``fact``: which of the requirement's facts (``Model.facts``) it judges, empty for a
        requirement of one, ``SUPPORT`` for a comparison that only supports them. ``over``: how many
        of the run's items it judged, when it judges a collection: none (a list read while the run
        had made nothing for it) fails on what it shows but judges no fact."""
        if rid not in self.requirements:
            return  # not selected in this run
        self.compared[rid] += 1
        if fact != SUPPORT and (over is None or over > 0):
            self.judged[rid].add(fact or rid)
        if ok:
            return
        if rid not in self.active:
            return  # already reported; muted so the run can look for the others
        text = message() if callable(message) else message
        calls, history = list(self.calls), self.history[-HISTORY:]
        judged = answer if isinstance(answer, Exchange) or answer is None else answer.exchange
        if judged is not None:
            calls, history = _through(calls, judged), _through(history, judged)
        compared = [ex for ex in also if ex is not None]
        self.found[rid] = Found(text, calls, history, compared, unsure)  # the final (shrunk) replay overwrites
        if self.first_failure is None:
            self.first_failure = self.examples - 1
        if self.stalled:
            raise Unshrunk(rid, text)
        self.failing = (rid, self.failing[1] if self.failing is not None else self.examples)
        raise Violation(rid, text)

    def cannot_compare(self, rid: str | Iterable[str], why: str, by: str = "", fact: str = "") -> None:
        """A comparison another requirement's failure prevents (``by``, when the model knows which):
        noted, never counted as passed; a requirement that judged none of its facts, or never one
        that this prevented (``fact``, empty for all of them), is then blocked by ``by``. ``rid``:
        one requirement, or every one the missing observation feeds."""
        for one in (rid,) if isinstance(rid, str) else rid:
            self.unverifiable.setdefault(one, Unjudged(why, by))
            self.prevented.setdefault(one, {}).setdefault(fact, Unjudged(why, by))

    def unjudged(self, rid: str) -> list[str]:
        """The facts of ``rid`` no comparison has judged yet."""
        return [f for f in self.facts.get(rid, (rid,)) if f not in self.judged.get(rid, ())]


def _through(calls: list[Call], judged: Exchange) -> list[Call]:
    """The calls up to and including the one that got ``judged`` (all of them if none did)."""
    at = next((n for n in range(len(calls) - 1, -1, -1) if calls[n].exchange is judged), len(calls) - 1)
    return calls[: at + 1]


class ModelMachine(RuleBasedStateMachine):
    """Base of every protocol's model: a fresh call log per example, the run's session shared."""

    session: ClassVar[Session]

    def __init__(self) -> None:
        super().__init__()
        self.session.begin_example()


@dataclass(frozen=True, slots=True)
class Model:
    """What a protocol's model module hands the engine."""

    machine: type[ModelMachine]
    prepare: Callable[[Session], Any]
    """Reads what the target holds before the run and returns the initial ledger."""
    steps: int = 8
    """Calls per sequence (Hypothesis' stateful_step_count)."""
    calls_per_step: float = 7.0
    """The requests one step sends on average: its write and the reads that compare what the write
    changed (whole list walks included). It weighs the phase's units in ``--shard``'s deal
    (run/shards.py) and nothing else; counted, not timed, by bench/unit_cost.py."""
    requirements: tuple[Requirement, ...] = ()
    """The requirements it decides (phase ``model``), added to the protocol's suite beside its
    scenario requirements."""
    facts: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """Requirement id -> the facts its statement holds, as its comparisons name them
    (``Session.check(fact=...)``); a requirement not named holds one. A requirement passes when a
    comparison judged one of them, and its verdict names those none judged."""
    targeted: tuple[Callable[[Any], None], ...] = ()
    """Fixed sequences run once each, every run, before the generated ones: each is handed a fresh
    machine on the run's session and calls its methods. What a generated sequence finds only when
    its draws happen to reach it (two uploads of one name to one task, a list walked at small page
    sizes) is reached here whatever the seed."""
