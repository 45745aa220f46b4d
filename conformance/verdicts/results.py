"""The one results model every report writer is fed from."""

from __future__ import annotations

import base64
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from enum import StrEnum
from typing import Any, TypeAlias

from .cksum import cksum
from .requirements import Authority, Level, Requirement

FORMAT_VERSION = 6
"""results.json's layout; raised whenever a field changes meaning or is removed (3: a finding's
evidence is the sequence that reproduces it from a fresh state, with its captures; 4: ``summary``
counts the document's requirements only, the practice ones are counted in ``advice``; 5: the
state every report calls "not verified" is ``"not verified"`` here too (it was ``"skipped"``), in
``status``, ``summary`` and ``advice``; the run's tokens appear only as ``${TOKEN}`` and
``${SECOND_TOKEN}``; a finding's ``wrong``, ``probe``, ``unsure``, ``also`` and ``shown_by``, an
exchange's ``started`` and a capture's ``used`` are new, all optional when read; 6: a status
``"not scored"``, a requirement newer than the run's ``requirement_set``, with the verdict it got as
its ``outcome``; ``requirement_set``, ``coverage``, an exchange's ``at_once`` and a finding's
``judgment`` and ``facts`` are new, optional when read)."""
FINDING_KEY = (
    "<requirement id>|<METHOD /path/template>|<kind>; kind is the schemathesis failure code and "
    "grouping key (ST101:500) or scenario:<digest of the message with ids, quoted values and numbers "
    "blanked>; stable across runs and versions of this format"
)

CRASHED = "crashed"
"""``RunResult.stopped`` of a run whose process died before its result (``parallel.py``)."""


# How a check reports what is not a pass (the context's verbs raise them; http raises CheckFailed too).
# Each may carry the exchanges that show it (``shown_by``): the finding is then filed under the
# latest of them, its curl line and script end with it, whatever calls the check made after it.

Shows: TypeAlias = "Exchange | Iterable[Exchange] | None"
"""What a verdict is shown by: one exchange, several, or none (the check's last call decides)."""


def exchanges(shown_by: Shows) -> tuple[Exchange, ...]:
    """``shown_by`` as a tuple of exchanges."""
    if shown_by is None:
        return ()
    if isinstance(shown_by, Exchange):
        return (shown_by,)
    return tuple(shown_by)


class CheckFailed(AssertionError):
    """The target violates the requirement; the message says how, ``shown_by`` which answers show
    it (empty: the check's last call, as guessed by ``Context.deciding``)."""

    def __init__(self, message: str = "", *, shown_by: Shows = None) -> None:
        super().__init__(message)
        self.shown_by = exchanges(shown_by)

    def __str__(self) -> str:  # a subclass that is a KeyError too keeps the message unquoted
        return str(self.args[0]) if self.args else ""


class NotVerified(Exception):
    """The requirement cannot be decided against this target; the message says why (``shown_by``:
    the answers that left it undecided, when known)."""

    def __init__(self, reason: str = "", *, shown_by: Shows = None) -> None:
        super().__init__(reason)
        self.shown_by = exchanges(shown_by)


class Blocked(Exception):
    """A setup step owned by requirement ``by`` went so wrong that this check cannot proceed.

    Reported as ``blocked`` (not verified) for every check but ``by``'s own, which fails: one bug,
    one root failure. ``shown_by``: the answers of the step that showed it, when known."""

    def __init__(self, by: str, reason: str, *, shown_by: Shows = None) -> None:
        super().__init__(reason)
        self.by = by
        self.shown_by = exchanges(shown_by)


class Status(StrEnum):
    PASSED = "passed"
    FAILED = "failed"
    NOT_VERIFIED = "not verified"
    """Not verified against this target; the message says why. Never counts as passed."""
    ERROR = "error"
    """The check could not reach a verdict (target unusable, suite bug); counts as not passed."""
    BLOCKED = "blocked"
    """Not verified because another requirement's failure left nothing to check (``blocked_by``
    names it, one that did not pass in this run); counts as not verified, so one bug shows as one
    root failure."""
    ADVICE = "advice"
    """A practice requirement (observed upstream behaviour, not the document) the target does not
    follow: its findings are reported, apart from the verdicts, and never fail a run."""
    NOT_SCORED = "not scored"
    """A requirement newer than the run's frozen requirement set (``--requirements``): it ran and
    its verdict is kept (``RequirementResult.outcome``), reported apart, never counted or gating."""

    @property
    def slug(self) -> str:
        """The state as one word (a CSS class, an id): ``not-verified``."""
        return self.value.replace(" ", "-")

    @classmethod
    def _missing_(cls, value: object) -> Status | None:
        # results.json before format 5 said "skipped" where every report says "not verified"
        return cls.NOT_VERIFIED if value == "skipped" else None

    @property
    def rank(self) -> int:
        """Its place in ``ORDER`` (0 best): a verdict moved to a higher rank got worse."""
        return ORDER.index(self)


ORDER = (
    Status.PASSED,
    Status.ADVICE,
    Status.NOT_SCORED,
    Status.NOT_VERIFIED,
    Status.BLOCKED,
    Status.ERROR,
    Status.FAILED,
)
"""The verdicts from best to worst, the one order every comparison of two runs uses (``diff``):
passed; advice (only practice broken, never gating); not scored (outside the run's frozen set,
never gating); the undecided ones, not verified (nothing
judged), blocked (another requirement's failure left nothing to judge), error (the check could not
decide); failed (judged broken). A move down this list is worse, a move up better."""


@dataclass(slots=True)
class Exchange:
    """One request and its response (or the transport error), as evidence."""

    method: str
    url: str
    request_headers: dict[str, str]
    request_body: str | None
    status: int | None = None
    response_headers: dict[str, str] = field(default_factory=dict)
    response_body: str | None = None
    error: str | None = None
    elapsed_ms: float = 0.0
    curl: str = ""
    """The request as a curl command line, rendered from the bytes sent (conformance/check/curl.py)."""
    request_body_base64: str | None = None
    """The body as sent, when it is not UTF-8 text (``request_body`` is then only a preview)."""
    stream_ended: bool = False
    """A streamed answer read to its end (the server closed it): its transcript is the whole answer,
    not only the part a check read before it decided."""
    response_cksum: str | None = None
    """``CRC SIZE`` of an answer that is not UTF-8 text, as POSIX ``cksum`` prints it: the
    preview cannot show such a body, so a replay compares it by this (``cksum.py``)."""
    started: float | None = None
    """When the request was sent (seconds since the epoch): a replay leaves the server the time the
    recorded run left it between two calls (a job finishing while the check polled it)."""
    at_once: bool = False
    """Sent with others at the same moment (``check/concurrent.at_once``, a check of a race): a
    script or a replay sends calls one after another, so it cannot tell whether the race is there."""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Exchange:
        return cls(**{k: data[k] for k in cls.__dataclass_fields__ if k in data})

    def record_body(self, raw: bytes | None) -> None:
        """Keep the exact bytes of a body that a text preview would garble (binary uploads)."""
        if raw:
            try:
                raw.decode("utf-8")
            except UnicodeDecodeError:
                self.request_body_base64 = base64.b64encode(raw).decode()

    def record_answer(self, raw: bytes) -> None:
        """Keep what identifies an answer that a text preview would garble (binary downloads)."""
        try:
            lossy = "\ufffd" in raw.decode("utf-8")  # a replacement character: bytes a decoder garbled
        except UnicodeDecodeError:
            lossy = True
        if lossy:
            self.response_cksum = cksum(raw)

    @property
    def sent_body(self) -> bytes | None:
        """The request body as sent, when the report holds all of it."""
        if self.request_body_base64 is not None:
            return base64.b64decode(self.request_body_base64)
        if self.request_body is None or self.request_body.endswith(" more characters]"):
            return None
        return self.request_body.encode()


@dataclass(frozen=True, slots=True)
class Capture:
    """A value a later call of a finding's reproduction sends, taken from an earlier answer
    (``reproduction.py`` finds them and renders the script that captures them)."""

    name: str
    """The shell variable that holds it (``TASK_ID``)."""
    step: int
    """Index of the call (in the finding's evidence) whose answer holds it."""
    source: str
    """``body``: the ``nth`` JSON string member named ``key``; ``header``: the header ``key``."""
    key: str
    nth: int
    value: str
    """The value the recorded run got."""
    used: bool = True
    """A later call sends it; False: only named where it stands, so a replay compares an answer's
    own sequence number (a job token a fresh server numbers anew) by its place, not its value."""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Capture:
        return cls(**{k: data[k] for k in cls.__dataclass_fields__ if k in data})


@dataclass(slots=True)
class Finding:
    """One distinct way a requirement failed: one kind of failure on one operation, with how many
    cases or checks hit it, the first one's evidence and the curl line that replays it.

    ``key`` is stable across runs and suite versions (a baseline may store it):
    ``<requirement id>|<METHOD /path/template>|<kind>``, where kind is schemathesis's failure code
    plus its own grouping key (``ST101:500``) in the property-based phase, and ``scenario`` plus a
    short digest of the message with ids and numbers blanked out in a scenario check."""

    key: str
    requirement: str
    operation: str
    kind: str
    message: str
    count: int = 1
    evidence: list[Exchange] = field(default_factory=list)
    """The calls that reproduce it from a fresh state, oldest first: each call the failure depends
    on (the create, the write, then the read); the last one's answer broke the rule."""
    captures: list[Capture] = field(default_factory=list)
    """Values a call sends that an earlier call's answer gave (ids): a replay takes today's."""
    baked: list[str] = field(default_factory=list)
    """Server-made values the calls send that no kept answer gives: a replay must send the old ones."""
    wrong: list[int] = field(default_factory=list)
    """Indices of earlier calls of another failure of the same check: a replay sends them for their
    effect and neither requires nor compares their answers."""
    probe: list[int] = field(default_factory=list)
    """Indices of earlier calls of this failure's own probe: compared, never required."""
    unsure: str = ""
    """Why a replay may not tell whatever the server does (calls left out; an object that changes
    by itself), empty when it can."""
    also: list[int] = field(default_factory=list)
    """Indices of earlier reads the deciding answer was compared with (a task by id, against its
    item in the list): compared, never required, since either may be the wrong one."""
    judged: str = ""
    """``status`` when the check judged the deciding answer's status alone (a 200 where a 401 was
    due): a replay compares the answers' statuses only. Empty: the whole answers."""
    accepted: list[int] = field(default_factory=list)
    """With ``judged`` ``status``: the statuses the check would have accepted of the deciding
    answer, so any other one reproduces the failure (a 202 recorded, a 200 today: both not the 401
    due, the job having finished in between). Empty: the recorded status must come back."""
    shown_by: str = ""
    """The operation of the answer the check named as showing the failure (``CheckFailed.shown_by``):
    the deciding call is that answer's. Empty: none was named, and the deciding call is the check's
    last one (or the latest of the operation its message names)."""
    judgment: str = ""
    """The stable name of the judgment that decided it (``check/judgments``, ``pages.numbers``):
    a replay judges today's deciding answer again by it. Empty: the check judged otherwise, and a
    replay compares the answers with the recorded ones."""
    facts: dict[str, Any] = field(default_factory=dict)
    """What the run knew when the judgment decided (the list's key, the ids it made): given back
    to the judgment on replay, each recorded id replaced by today's."""

    @property
    def deciding(self) -> Exchange | None:
        return self.evidence[-1] if self.evidence else None

    def to_dict(self) -> dict[str, Any]:
        deciding = self.deciding
        return {
            "key": self.key,
            "operation": self.operation,
            "kind": self.kind,
            "message": self.message,
            "count": self.count,
            "curl": deciding.curl if deciding else "",
            "status": deciding.status if deciding else None,
            "evidence": [e.to_dict() for e in self.evidence],
            "captures": [c.to_dict() for c in self.captures],
            "baked": self.baked,
            "wrong": self.wrong,
            "probe": self.probe,
            "unsure": self.unsure,
            "also": self.also,
            "judged": self.judged,
            "accepted": self.accepted,
            "shown_by": self.shown_by,
            "judgment": self.judgment,
            "facts": self.facts,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any], requirement: str) -> Finding:
        evidence = [Exchange.from_dict(e) for e in data["evidence"]]
        return cls(
            data["key"],
            requirement,
            data["operation"],
            data["kind"],
            data["message"],
            data["count"],
            evidence,
            [Capture.from_dict(c) for c in data.get("captures") or []],
            [str(v) for v in data.get("baked") or []],
            [int(n) for n in data.get("wrong") or []],
            [int(n) for n in data.get("probe") or []],
            str(data.get("unsure") or ""),
            [int(n) for n in data.get("also") or []],
            str(data.get("judged") or ""),
            [int(n) for n in data.get("accepted") or []],
            str(data.get("shown_by") or ""),
            str(data.get("judgment") or ""),
            dict(data.get("facts") or {}),
        )


@dataclass(slots=True)
class RequirementResult:
    requirement: Requirement
    status: Status
    message: str = ""
    evidence: list[Exchange] = field(default_factory=list)
    duration_s: float = 0.0
    cases: int = 0
    """Generated cases behind a schema-phase verdict."""
    findings: list[Finding] = field(default_factory=list)
    """Every distinct failure, most frequent first (empty unless failed)."""
    blocked_by: str | None = None
    """For ``blocked``: the requirement whose failure left this one nothing to check."""
    baseline: str = ""
    """``expected`` (a failure the ``--expected-failures`` file lists: it does not fail the run) or
    ``stale`` (listed, but it passed: the run fails until the entry is removed); empty otherwise."""
    baseline_reason: str = ""
    outcome: Status | None = None
    """For ``not scored``: the verdict the requirement got, reported, never counted."""

    @property
    def verdict(self) -> str:
        """The status as a reader should see it: ``expected failure`` and ``stale`` included."""
        return {"expected": "expected failure", "stale": "stale"}.get(self.baseline, self.status.value)

    @property
    def gates_ok(self) -> bool:
        """Passes the gate: passed and not stale, or a failure the baseline expects."""
        return (self.status is Status.PASSED and self.baseline != "stale") or self.baseline == "expected"

    def to_dict(self) -> dict[str, Any]:
        r = self.requirement
        return {
            "id": r.id,
            "level": r.level.value,
            "authority": r.authority.value,
            "statement": r.statement,
            "ref": r.ref,
            "phase": r.phase,
            "depends_on_state": r.depends_on_state or None,
            "status": self.status.value,
            "message": self.message,
            "duration_s": round(self.duration_s, 3),
            "cases": self.cases,
            "blocked_by": self.blocked_by,
            "findings": [f.to_dict() for f in self.findings],
            "evidence": [e.to_dict() for e in self.evidence],
            "baseline": {"verdict": self.baseline, "reason": self.baseline_reason} if self.baseline else None,
            **({"outcome": self.outcome.value} if self.outcome is not None else {}),
        }

    @classmethod
    def from_dict(
        cls, data: dict[str, Any], protocol: str, requirement: Requirement | None = None
    ) -> RequirementResult:
        """A result as ``to_dict`` wrote it; the requirement is rebuilt from the record unless the
        registry's own is given."""
        if requirement is None:
            level, state = Level(data["level"]), data.get("depends_on_state") or ""
            authority = Authority(data.get("authority") or Authority.DOCUMENT)
            requirement = Requirement(
                data["id"], level, data["statement"], data["ref"], protocol, data["phase"], state, authority=authority
            )
        result = cls(
            requirement,
            Status(data["status"]),
            data["message"],
            [Exchange.from_dict(e) for e in data["evidence"]],
            data["duration_s"],
            data["cases"],
            findings=[Finding.from_dict(f, data["id"]) for f in data.get("findings", [])],
            blocked_by=data.get("blocked_by"),
            outcome=Status(data["outcome"]) if data.get("outcome") else None,
        )
        if data.get("baseline"):
            result.baseline, result.baseline_reason = data["baseline"]["verdict"], data["baseline"]["reason"]
        return result


def settle(result: RequirementResult) -> RequirementResult:
    """A verdict as the requirement's authority lets it stand: a practice requirement's failure is
    advice (its findings kept), whatever phase decided it."""
    if result.requirement.authority is Authority.PRACTICE and result.status is Status.FAILED:
        result.status = Status.ADVICE
    return result


def unblock(result: RequirementResult, verdicts: Mapping[str, Status | None]) -> RequirementResult:
    """A check is reported blocked by a requirement only when that requirement did not pass in
    this run. Blocked by one that passed (its own check held; a step it owns failed here) or that
    is not in the run, it is not verified, saying so. ``verdicts``: every requirement of the run,
    None for one not decided yet (the check stays blocked: that one has not passed)."""
    by = result.blocked_by
    if result.status is not Status.BLOCKED or by is None:
        return result
    selected = by in verdicts
    owner = verdicts.get(by)
    if selected and owner is not Status.PASSED:
        return result
    why = "though it passed its own check" if selected else "which is not in this run"
    reason = result.message.removeprefix(f"blocked by {by}: ")
    result.status, result.blocked_by = Status.NOT_VERIFIED, None
    result.message = f"not verified: a step {by} owns failed here ({by}, {why}): {reason}"
    return result


@dataclass(slots=True)
class RunResult:
    protocol: str
    target: str
    suite_version: str
    seed: int
    level: Level
    started_at: str
    finished_at: str = ""
    duration_s: float = 0.0
    results: list[RequirementResult] = field(default_factory=list)
    fatal: str | None = None
    """Set when the target was unreachable or unusable: the run is a usage/target error (exit 2)."""
    stats: dict[str, Any] = field(default_factory=dict)
    base_url: str = ""
    """The URL the document's paths were appended to (the embedded mock's, when it was started)."""
    meta: dict[str, Any] = field(default_factory=dict)
    """How the run can be reproduced: the document's digest, hash seed, max-examples, profile,
    budget and the implementation's name and version (``--target-name``/``--target-version``)."""
    stopped: str | None = None
    """``interrupted`` or ``budget`` when the run was stopped before every requirement was decided;
    ``crashed`` when the process running it died before its result (the run fails, whatever it
    had decided)."""
    shard: dict[str, Any] | None = None
    """A shard's share (``--shard K/N``, N > 1): which units it ran, what its phases counted and the
    options every shard of one campaign must share; what ``conformance merge`` folds."""
    coverage: dict[str, Any] = field(default_factory=dict)
    """What the run exercised of the document, per operation (``check/coverage.py``); empty when
    nothing was counted (a salvaged or merged run, the proxy)."""
    observed_only: bool = False
    """The proxy's client mode: only what observed traffic broke decides the exit code; a
    requirement no exchange exercised (not verified) is reported and gates nothing. A run in which
    nothing gating was exercised at all still fails: it showed nothing."""

    @property
    def scored(self) -> list[RequirementResult]:
        """Every result but the ``not scored`` ones (outside the run's frozen requirement set)."""
        return [r for r in self.results if r.status is not Status.NOT_SCORED]

    @property
    def unscored(self) -> list[RequirementResult]:
        """Requirements newer than the run's frozen set: they ran, they are shown, never counted."""
        return [r for r in self.results if r.status is Status.NOT_SCORED]

    @property
    def requirement_set(self) -> str:
        """The frozen requirement set the run scored (``--requirements``), or "" for today's registry."""
        return str(self.meta.get("requirement_set") or "")

    @property
    def document(self) -> list[RequirementResult]:
        """The scored verdicts on what the document fixes: the ones that gate and are tallied by level."""
        return [r for r in self.scored if r.requirement.authority is Authority.DOCUMENT]

    @property
    def practice(self) -> list[RequirementResult]:
        """The scored practice requirements' results: advice, shown apart, never gating."""
        return [r for r in self.scored if r.requirement.authority is Authority.PRACTICE]

    def tally(self) -> dict[str, dict[str, int]]:
        """Per level, the document requirements' verdicts (advice is never among them)."""
        out: dict[str, dict[str, int]] = {}
        for level in Level:
            counts = {s.value: 0 for s in Status if s not in (Status.ADVICE, Status.NOT_SCORED)}
            for res in self.document:
                if res.requirement.level is level:
                    counts[res.status.value] += 1
            out[level.value] = counts
        return out

    def advice_tally(self) -> dict[str, int]:
        """The practice requirements' verdicts: followed (passed), advice, and the undecided."""
        counts = {s.value: 0 for s in Status if s not in (Status.FAILED, Status.NOT_SCORED)}
        for res in self.practice:
            counts[res.status.value] += 1
        return counts

    @property
    def must_passed(self) -> bool:
        """Every document MUST passed. A selection with no MUST (``--only`` a SHOULD) gates on what
        it ran, and one of practice requirements only on none of them erring (advice never fails a
        run); an empty one never passes."""
        if self.fatal is not None:
            return False
        if not self.gating:  # passes only for a selection of practice requirements alone, none erring
            scored = self.scored
            return bool(scored) and not self.document and all(r.status is not Status.ERROR for r in scored)
        return not self.failing

    @property
    def failing(self) -> list[RequirementResult]:
        """The gating results that fail the run (failed, not verified, an error), what a CI step
        annotates; stale baseline entries (``stale``) fail it too, at any level."""
        # a check blocked by a failure the baseline expects waits on the same known bug
        expected = {r.requirement.id for r in self.results if r.baseline == "expected"}
        return [r for r in self.gating if not (r.gates_ok or (r.status is Status.BLOCKED and r.blocked_by in expected))]

    @property
    def product(self) -> str:
        """The implementation under test as the vendor named it (``--target-name``/``--target-version``),
        or its URL when it was not named."""
        named = " ".join(str(self.meta.get(k) or "") for k in ("target_name", "target_version")).strip()
        return named or self.target

    @property
    def verdict(self) -> str:
        """The run in one word for a report's headline: PASS, FAIL or TARGET ERROR."""
        return "PASS" if self.exit_code == 0 else ("TARGET ERROR" if self.fatal else "FAIL")

    @property
    def state_dependent(self) -> dict[str, str]:
        """Requirements of this run whose verdict a second run against the same server may move,
        with why (see ``Requirement.depends_on_state``)."""
        return {r.requirement.id: why for r in self.results if (why := r.requirement.depends_on_state)}

    @property
    def stale(self) -> list[RequirementResult]:
        """Baseline entries that now pass, at any level: they fail the run so the list shrinks."""
        return [r for r in self.results if r.baseline == "stale"]

    @property
    def gating(self) -> list[RequirementResult]:
        """The results the exit code is decided by: the document's MUSTs, or all the document's
        requirements of a selection without one (under ``observed_only``, of those some exchange
        exercised). Practice requirements never gate."""
        document = self.document
        musts = [r for r in document if r.requirement.level is Level.MUST]
        gating = musts or document
        if self.observed_only:
            return [r for r in gating if r.status is not Status.NOT_VERIFIED]
        return gating

    @property
    def exit_rule(self) -> str:
        """What exit code 0 means for this run, in a sentence a report can print."""
        if self.observed_only:
            return "0 means no observed exchange broke a MUST requirement (what traffic never exercised gates nothing)"
        return "0 means every MUST requirement passed"

    @property
    def exit_code(self) -> int:
        if self.stopped == "interrupted":
            return 130
        if self.fatal is not None:
            return 2
        if self.shard is not None:  # a share: what it failed fails it; the merge decides the rest
            failed = any(r.status in (Status.FAILED, Status.ERROR) and not r.gates_ok for r in self.gating)
            return 1 if failed or self.stale or self.stopped == CRASHED else 0
        return 0 if self.must_passed and not self.stale and self.stopped != CRASHED else 1

    def to_dict(self) -> dict[str, Any]:
        return {
            "format_version": FORMAT_VERSION,
            "finding_key": FINDING_KEY,
            "protocol": self.protocol,
            "target": self.target,
            "base_url": self.base_url,
            "suite_version": self.suite_version,
            "seed": self.seed,
            **self.meta,
            "level": self.level.value,
            "started_at": self.started_at,
            "finished_at": self.finished_at,
            "duration_s": round(self.duration_s, 3),
            "fatal": self.fatal,
            "stopped": self.stopped,
            "exit_code": self.exit_code,
            "summary": self.tally(),
            "advice": self.advice_tally(),
            "baseline": {
                "expected": sum(r.baseline == "expected" for r in self.results),
                "stale": len(self.stale),
            },
            "stats": self.stats,
            "state_dependent": self.state_dependent,
            "requirements": [r.to_dict() for r in self.results],
            **({"coverage": self.coverage} if self.coverage else {}),
            **({"shard": self.shard} if self.shard is not None else {}),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RunResult:
        """A run as results.json records it (``to_dict``): what a CI step or a merge reads back.
        Keys ``to_dict`` does not write itself are the run's ``meta``, as it flattened them."""
        protocol = data["protocol"]
        return cls(
            protocol=protocol,
            target=data["target"],
            suite_version=data["suite_version"],
            seed=data["seed"],
            level=Level(data["level"]),
            started_at=data["started_at"],
            finished_at=data["finished_at"],
            duration_s=data["duration_s"],
            results=[RequirementResult.from_dict(r, protocol) for r in data["requirements"]],
            fatal=data["fatal"],
            stats=data.get("stats", {}),
            base_url=data.get("base_url", ""),
            meta={k: v for k, v in data.items() if k not in _RUN_KEYS},
            stopped=data.get("stopped"),
            coverage=data.get("coverage") or {},
            observed_only=data.get("observed_only", False),
        )


_RUN_KEYS = frozenset(
    {
        "format_version",
        "finding_key",
        "protocol",
        "target",
        "base_url",
        "suite_version",
        "seed",
        "level",
        "started_at",
        "finished_at",
        "duration_s",
        "fatal",
        "stopped",
        "observed_only",
        "exit_code",
        "summary",
        "advice",
        "baseline",
        "stats",
        "state_dependent",
        "requirements",
        "coverage",
    }
)
"""The keys ``RunResult.to_dict`` writes of its own (the rest are ``meta``)."""
