"""Judges each exchange as it passes and keeps the tally every report is built from.

A requirement is passed only when some observed exchange exercised it and none broke it; one no
exchange exercised is reported not observed. Each violation is printed as one line as it is found.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from specs.documents import load
from specs.schemas import SchemaSet

from ..check.judgments.events import Items
from ..check.passive import Checks, StreamState, Verdict
from ..check.streams import Frame, FrameError, NdjsonReader, SseReader
from ..check.traffic import Observed, Routes
from ..run.suites import suite
from ..verdicts.baseline import Entry
from ..verdicts.findings import FindingSet, digest
from ..verdicts.requirements import Level, Requirement
from ..verdicts.results import Exchange
from .document import DocumentJudge, client_registry

if TYPE_CHECKING:
    from .har import Recorder

MAX_EVIDENCE = 3
"""Failing exchanges kept per requirement (the first ones), plus one that held."""
MAX_FINDINGS = 50
"""Distinct failures kept per requirement; further new kinds are counted in ``broken`` only."""


@dataclass(frozen=True, slots=True)
class Selection:
    """What the proxy reports and how it gates, as ``run`` takes it: ``--only``/``--skip`` id
    prefixes, ``--level`` (that level and stricter), ``--expected-failures`` entries, and the client
    mode, where only what observed traffic broke decides the exit code."""

    only: tuple[str, ...] = ()
    skip: tuple[str, ...] = ()
    level: Level = Level.MAY
    expected_failures: tuple[Entry, ...] = ()
    client_mode: bool = False

    def __call__(self, requirement: Requirement) -> bool:
        rid = requirement.id
        return (
            self.level.includes(requirement.level)
            and (not self.only or rid.startswith(self.only))
            and not (self.skip and rid.startswith(self.skip))
        )


@dataclass(slots=True)
class Tally:
    requirement: Requirement
    exercised: int = 0
    broken: int = 0
    first_reason: str = ""
    failing: list[Exchange] = field(default_factory=list)
    holding: Exchange | None = None
    findings: FindingSet = field(default_factory=FindingSet)
    """Each distinct way it broke (operation and reason with ids blanked), counted."""


@dataclass(slots=True)
class Open:
    """An exchange in flight: its verdict so far, its request's problems, its stream if any."""

    ex: Observed
    verdict: Verdict
    problems: list[str]
    stream: StreamState | None = None
    reader: NdjsonReader | SseReader | None = None
    items: Items | None = None
    """Its events' judge against the document's item schema (an SSE stream the document gives one)."""


class Observer:
    def __init__(
        self,
        protocol_id: str,
        upstream: str,
        tokens: tuple[str, ...] = (),
        console: Callable[[str], None] = lambda _: None,
        max_frames: int = 10_000,
        settle_s: float = 30.0,
        selection: Selection = Selection(),
        recorder: Recorder | None = None,
    ) -> None:
        self.protocol_id = protocol_id
        self.upstream = upstream.rstrip("/")
        self.tokens = tokens
        self.console = console
        self.max_frames = max_frames
        self.selection = selection
        self.recorder = recorder
        """Keeps the traffic for the HAR export (``--har``); None: nothing kept."""
        self.keep_bytes = max(4000, recorder.body_bytes if recorder else 0)
        """A stream's first bytes kept as evidence (and for the HAR export)."""
        self.spec = load(protocol_id)
        protocol_suite = suite(protocol_id)
        self.schemas = SchemaSet(self.spec.raw)
        registered = [c.requirement for c in protocol_suite.registry] + [
            c.requirement for c in client_registry(protocol_id)
        ]
        known = {r.id for r in registered}
        # every requirement is judged (one judge serves several); only the selected ones are reported
        self.requirements = [r for r in registered if selection(r)]
        self.document = DocumentJudge(
            self.spec,
            self.schemas,
            {rid for rid in known if "-SCHEMA-" in rid},
            protocol_suite.schema_expected_statuses,
            protocol_suite.streaming_operations,
            tokens,
        )
        judge = protocol_suite.passive or Checks
        self.checks: Checks = judge(self.spec, self.schemas, tokens)
        self.checks.settle_s = settle_s
        self.judged = {r.id for r in registered if r.from_traffic}
        """What traffic can decide; the rest are reported not observed (only ``run`` decides them)."""
        self.tallies = {r.id: Tally(r) for r in self.requirements}
        self.routes = Routes(self.spec)
        self.exchanges = 0
        self.committed = 0
        """Exchanges judged to their end (a stream's verdict comes after its last byte went on)."""
        self.violations = 0
        self.started = time.monotonic()
        self.started_at = datetime.now(UTC).isoformat(timespec="seconds")

    # one exchange, in the order the proxy sees it -------------------------------------------------
    def begin(self, method: str, path: str, query: list[tuple[str, str]], headers: dict[str, str], body: bytes) -> Open:
        self.exchanges += 1
        ex = Observed(self.exchanges, method, path, query, headers, body)
        matched = self.routes.match(method, path)
        if matched:
            ex.operation, ex.path_params = matched
        verdict = Verdict()
        flight = Open(ex, verdict, [])
        if self._cors_preflight(ex):
            return flight  # the browser's question, not the client's request: nothing to judge
        try:
            flight.problems = ex.problems = self.document.request_problems(ex)
        except Exception as exc:  # a judging bug must never stop the request being forwarded
            self.console(f"proxy: internal error judging {ex.label}: {type(exc).__name__}: {exc}")
            return flight
        self.document.judge_request(ex, flight.problems, verdict)
        return flight

    def _cors_preflight(self, ex: Observed) -> bool:
        """A browser's CORS preflight for a method and path the document serves. The client did
        not write it, so it is neither a client violation nor an answer of the document's."""
        if ex.method != "OPTIONS" or "origin" not in ex.request_headers:
            return False
        asked = ex.request_headers.get("access-control-request-method", "").strip().upper()
        return bool(asked) and self.routes.match(asked, ex.path) is not None

    def stream_kind(self, flight: Open) -> str | None:
        if flight.ex.status is None or not 200 <= flight.ex.status < 300 or flight.ex.operation is None:
            return None
        return self.checks.stream_kind(flight.ex)

    def whole(self, flight: Open) -> dict[str, str]:
        """A complete answer (status, headers, body): judge it; the violations so far."""
        ex, verdict = flight.ex, flight.verdict
        try:
            self.document.judge_response(ex, flight.problems, verdict)
        except Exception as exc:
            self._crashed(flight, exc)
        if ex.operation is not None:
            try:
                self.checks.on_response(ex, verdict)
            except Exception as exc:
                self._crashed(flight, exc)
        return verdict.violations

    def stream_start(self, flight: Open, kind: str) -> dict[str, str]:
        """A stream's status and headers, before its first byte is forwarded."""
        flight.ex.streamed = True
        flight.stream = StreamState(kind)
        flight.reader = NdjsonReader(self.max_frames) if kind == "ndjson" else SseReader(self.max_frames)
        if kind == "sse":
            self._guard(flight, lambda: setattr(flight, "items", self.document.items(flight.ex)))
        self._guard(flight, lambda: self.document.judge_response(flight.ex, flight.problems, flight.verdict))
        stream = flight.stream
        self._guard(flight, lambda: self.checks.on_stream_start(flight.ex, flight.verdict, stream))
        return flight.verdict.violations

    def chunk(self, flight: Open, data: bytes) -> None:
        """Bytes just forwarded: judge every frame they complete. After a framing error the rest
        of the stream is passed on unjudged."""
        if flight.reader is None or flight.stream is None:
            return
        flight.ex.response_size += len(data)
        if len(flight.ex.response_body) < self.keep_bytes:
            flight.ex.response_body += data[: self.keep_bytes - len(flight.ex.response_body)]
        try:
            for frame in flight.reader.feed(data):
                self._frame(flight, frame)
        except FrameError as exc:
            self._end(flight, str(exc))

    def end(self, flight: Open, error: str | None = None) -> None:
        if flight.reader is not None and flight.stream is not None:
            if error is None:
                try:
                    for frame in flight.reader.close():
                        self._frame(flight, frame)
                except FrameError as exc:
                    error = str(exc)
            self._end(flight, error)
        self.commit(flight)

    def broken(self, flight: Open, reason: str) -> None:
        """A whole answer that began (status and headers) but never completed."""
        flight.ex.error = reason
        self._guard(flight, lambda: self.document.judge_response(flight.ex, flight.problems, flight.verdict))
        if flight.ex.operation is not None:
            self._guard(flight, lambda: self.checks.on_broken(flight.ex, flight.verdict, reason))
        self.commit(flight)

    def _frame(self, flight: Open, frame: Frame) -> None:
        assert flight.stream is not None
        stream = flight.stream
        stream.frames += 1
        stream.last = frame
        items = flight.items
        if items is not None:
            self._guard(flight, lambda: self.document.judge_event(flight.ex, items, frame, flight.verdict))
        self._guard(flight, lambda: self.checks.on_frame(flight.ex, flight.verdict, stream, frame))

    def _end(self, flight: Open, error: str | None) -> None:
        stream = flight.stream
        if stream is None or flight.reader is None:
            return
        flight.reader = None  # judged once
        self._guard(flight, lambda: self.checks.on_stream_end(flight.ex, flight.verdict, stream, error))

    def _guard(self, flight: Open, hook: Callable[[], None]) -> None:
        """A passive check that crashes on odd traffic must not break the forwarding; it shows."""
        try:
            hook()
        except Exception as exc:
            self._crashed(flight, exc)

    def _crashed(self, flight: Open, exc: Exception) -> None:
        self.console(f"proxy: internal error judging {flight.ex.label}: {type(exc).__name__}: {exc}")

    def commit(self, flight: Open) -> None:
        ex = flight.ex
        evidence: Exchange | None = None
        for rid, reason in flight.verdict.results.items():
            tally = self.tallies.get(rid)
            if tally is None:
                continue
            tally.exercised += 1
            if reason is None:
                if tally.holding is None:
                    tally.holding = evidence = evidence or ex.exchange(self.upstream + ex.path)
                continue
            tally.broken += 1
            self.violations += 1
            if not tally.first_reason:
                tally.first_reason = f"{ex.label}: {reason}"
            evidence = evidence or ex.exchange(self.upstream + ex.path)
            if len(tally.failing) < MAX_EVIDENCE:
                tally.failing.append(evidence)
            if len(tally.findings) < MAX_FINDINGS:
                operation = ex.operation.label if ex.operation else f"{ex.method} {ex.path}"
                judgment, facts = flight.verdict.judgments.get(rid, ("", {}))
                tally.findings.add(
                    rid,
                    operation,
                    f"proxy:{digest(reason)}",
                    reason,
                    [evidence],
                    fresh=False,
                    judgment=judgment,
                    facts=facts,
                )
            self.console(f"{rid} {ex.label}: {reason}")
        if self.recorder is not None:
            results = flight.verdict.results.items()
            self.recorder.add(ex, {rid: why for rid, why in results if why is not None and rid in self.tallies})
        self.committed += 1
