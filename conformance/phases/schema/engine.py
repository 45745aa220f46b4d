"""The property-based phase: schemathesis's engine (examples, coverage, fuzzing, stateful) run
against the target from the document, its check verdicts rolled up into requirements.

The requirements are the same for every protocol (ids ``<PREFIX>-SCHEMA-NNN``, declared in
``run/schema_requirements.py``); which apply is derived from the document (``run/applicability.py``):
one no server could fail against a document is not registered for it, so nothing is reported
passed that tested nothing.
"""

from __future__ import annotations

import hashlib
import re
import time
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from functools import cache
from typing import Any
from urllib.parse import urlsplit

from specs.documents import Spec

from ...check import internals
from ...check.context import Context
from ...check.curl import curl_command
from ...check.http import Client, Limits, TargetError, _preview, request_preview
from ...check.judgments import events
from ...run.depth import INDEPENDENT_DEPTHS
from ...run.events import CaseFinished, Event, StageStarted
from ...run.exampledb import hypothesis_default
from ...run.plan import RunPlan
from ...run.schema_requirements import SCHEMA_CHECKS
from ...run.shards import SCHEMA_STAGES, STATEFUL
from ...run.watchdog import BUDGET, INTERRUPTED, STOPPED_ANSWERING
from ...verdicts.findings import FindingSet
from ...verdicts.requirements import Requirement
from ...verdicts.results import Exchange, Finding, RequirementResult, Status
from ..base import RunState
from ..draws import seed_only
from . import targeted
from .items import ItemStreams, Judged
from .stalls import stall_guard


@dataclass
class _Tally:
    passed: int = 0
    failed: int = 0
    errors: int = 0
    reached: int = 0
    """Passed cases whose answer came from the operation itself (not a 404 for a path it does not know)."""
    findings: FindingSet = field(default_factory=FindingSet)

    def to_dict(self) -> dict[str, Any]:
        return {
            "passed": self.passed,
            "failed": self.failed,
            "errors": self.errors,
            "reached": self.reached,
            "findings": [f.to_dict() for f in self.findings.seen()],
        }

    def absorb(self, data: Mapping[str, Any]) -> None:
        self.passed += data["passed"]
        self.failed += data["failed"]
        self.errors += data["errors"]
        self.reached += data["reached"]
        for f in data["findings"]:
            self.findings.absorb(Finding.from_dict(f, f["key"].split("|", 1)[0]))


@dataclass
class SchemaTally:
    """What the phase counted, by requirement and for the phase: the facts its verdicts are decided
    from. Shards' tallies add up (``absorb``) to the tally of the run that did all their units."""

    requirements: dict[str, _Tally]
    cases: int = 0
    seconds: float = 0.0
    stopped: str = ""
    errors: int = 0
    first_error: str = ""
    unanswered: set[str] = field(default_factory=set)
    """Routes a transport failure hit."""
    answered: set[str] = field(default_factory=set)
    """Routes that gave some case a usable answer."""
    stall_silent: set[str] = field(default_factory=set)
    stalls: dict[str, dict[str, int]] = field(default_factory=dict)

    @classmethod
    def empty(cls, requirement_ids: Iterable[str]) -> SchemaTally:
        return cls({rid: _Tally() for rid in requirement_ids})

    def to_dict(self) -> dict[str, Any]:
        return {
            "requirements": {rid: t.to_dict() for rid, t in self.requirements.items()},
            "cases": self.cases,
            "seconds": round(self.seconds, 3),
            "stopped": self.stopped,
            "errors": self.errors,
            "first_error": self.first_error,
            "unanswered": sorted(self.unanswered),
            "answered": sorted(self.answered),
            "stall_silent": sorted(self.stall_silent),
            "stalls": self.stalls,
        }

    def absorb(self, data: Mapping[str, Any]) -> None:
        """Add another share's tally (a shard's, as ``to_dict`` wrote it)."""
        for rid, tally in data["requirements"].items():
            self.requirements.setdefault(rid, _Tally()).absorb(tally)
        self.cases += data["cases"]
        self.seconds = max(self.seconds, data["seconds"])  # shards run side by side
        self.stopped = self.stopped or data["stopped"]
        self.errors += data["errors"]
        self.first_error = self.first_error or data["first_error"]
        self.unanswered.update(data["unanswered"])
        self.answered.update(data["answered"])
        self.stall_silent.update(data["stall_silent"])
        for route, counts in data["stalls"].items():
            mine = self.stalls.setdefault(route, {"stalls": 0, "cases_not_sent": 0})
            for k, v in counts.items():
                mine[k] = mine.get(k, 0) + v

    def stats(self) -> dict[str, Any]:
        return {
            "schema_cases": self.cases,
            "schema_seconds": round(self.seconds, 2),
            "schema_stopped": self.stopped,
            "schema_errors": self.errors,
            "schema_stalled_routes": self.stalls,
        }


def _exchange(interaction: Any) -> Exchange:
    req, resp = interaction.request, interaction.response
    headers = {k: ", ".join(v) for k, v in dict(req.headers).items()}
    exchange = Exchange(req.method, req.uri, headers, request_preview(req.body) if req.body else None)
    exchange.curl = curl_command(req.method, req.uri, headers, req.body)
    exchange.record_body(req.body)
    if resp is not None:
        exchange.status = resp.status_code
        exchange.response_headers = {k: ", ".join(v) for k, v in dict(resp.headers).items()}
        exchange.response_body = _preview(resp.content)
        exchange.record_answer(resp.content or b"")
        exchange.elapsed_ms = round(resp.elapsed * 1000, 1)
    return exchange


def schemathesis_config(
    spec: Spec,
    requirements: list[Requirement],
    *,
    seed: int,
    max_examples: int,
    timeout: float,
    headers: dict[str, str],
    skip_body_checks_for: tuple[str, ...] = (),
    expected_statuses: Mapping[str, Mapping[str, tuple[str, ...]]] | None = None,
    units: Collection[str] | None = None,
    keep_examples: bool = False,
    independent_units: bool = False,
) -> dict[str, Any]:
    """The phase's schemathesis configuration (the keys of ``schemathesis.toml``). A function of its
    own so that the schemathesis CLI can be run on exactly the same settings (bench/suite_throughput)."""
    wanted = {r.id for r in requirements}
    checks: dict[str, Any] = {
        sc.check: {"enabled": f"{spec.info.prefix}-SCHEMA-{sc.number}" in wanted} for sc in SCHEMA_CHECKS
    }
    # A refusal is fair with any 4xx where the document names no status for the error (and where
    # it names one, the protocol's scenario requirement holds that status at the document's level):
    # schemathesis's default list leaves out 4xx statuses a server may fairly refuse with (411,
    # 413, 414, 431...). 5xx stays accepted here: a crash is SCHEMA-001's finding, not this one's.
    if checks["negative_data_rejection"]["enabled"]:
        checks["negative_data_rejection"]["expected-statuses"] = ["4xx", "5xx"]
    for other in (
        "missing_required_header",
        "unsupported_method",
        "allow_header_conformance",
        "object_level_authorization",
    ):
        checks[other] = {"enabled": False}
    config: dict[str, Any] = {
        "seed": seed,
        "request-timeout": timeout,
        "headers": headers,
        # No example database unless one is asked for (``keep_examples``: then Hypothesis's default
        # profile holds it, run/exampledb.py): the same seed against the same target must give the
        # same verdicts, whatever earlier runs left in ./.hypothesis.
        "generation": {"max-examples": max_examples, "mode": "all", **({} if keep_examples else {"database": "none"})},
        "phases": {
            "stateful": {"enabled": units is None or STATEFUL in units},
            # schemathesis feeds values from earlier answers into later operations' cases, so a
            # unit's draws would depend on which units its process ran before it: a campaign meant
            # to be sharded draws each unit on its own (the suite's known_path_values still names
            # resources that exist), and its shards draw exactly the single run's cases
            **(
                {stage: {"extra-data-sources": {"responses": False}} for stage in SCHEMA_STAGES}
                if independent_units
                else {}
            ),
        },
        "checks": checks,
        # explore past a failing check: a second bug on the same operation is a finding too
        "continue-on-failure": True,
        # a redirect is the answer judged, as the scenarios' client judges it: following it would
        # judge another operation's answer, and a redirect loop costs 30 requests per case
        "max-redirects": 0,
        "suppress-health-check": ["all"],
    }
    per_operation: dict[str, dict[str, Any]] = {}
    for op_id in skip_body_checks_for:
        # streamed answers (one JSON object per line) are validated frame by frame by the scenarios
        per_operation.setdefault(op_id, {})["response_schema_conformance"] = {"enabled": False}
    for op_id, extra in (expected_statuses or {}).items():
        # statuses the document prescribes for schema-valid requests (e.g. 501 for an unsupported
        # mode, 400 for a name the schema cannot enumerate), added to schemathesis's defaults
        for check_name, statuses in extra.items():
            defaults = _DEFAULT_EXPECTED[check_name]
            per_operation.setdefault(op_id, {})[check_name] = {"expected-statuses": [*defaults, *statuses]}
    stages: dict[str, dict[str, Any]] = {}
    if units is not None:  # a shard: each operation's stages that are its units (run/shards.py)
        for op in spec.operations():
            stages[op.operation_id] = {stage: {"enabled": f"{stage} {op.label}" in units} for stage in SCHEMA_STAGES}
    config["operations"] = [
        {
            "include-operation-id": op_id,
            **({"checks": per_operation[op_id]} if op_id in per_operation else {}),
            **({"phases": stages[op_id]} if op_id in stages else {}),
        }
        for op_id in dict.fromkeys([*per_operation, *stages])
    ]
    if not config["operations"]:
        del config["operations"]
    return config


def known_path_values(plan: RunPlan, state: RunState) -> Mapping[str, tuple[str, ...]]:
    """The protocol's path values that name resources existing on the target (its descriptor's
    ``known_path_values``, asked through a check's Context), or none."""
    ask = plan.suite.known_path_values
    if ask is None:
        return {}
    setup = Context(plan.spec, plan.schemas, plan.options, plan.limits, state.memo, state.guard)
    try:
        return ask(setup)
    finally:
        setup.close()


def run_schema_phase(plan: RunPlan, state: RunState) -> tuple[list[RequirementResult], SchemaTally]:
    """The plan's schema requirements decided by one schemathesis run against its target, within
    the property-based phase's share of the run's budget: over the plan's units of the phase (a
    shard's; all of them otherwise), replaying and keeping examples in the run's example database
    when it has one (run/exampledb.py). Returns the verdicts and the tally they were decided from
    (what a shard reports for ``merge``)."""
    events, from_schema = internals.get("schemathesis.engine.events"), internals.get("schemathesis.engine.from_schema")

    spec, options, protocol_suite = plan.spec, plan.options, plan.suite
    base_url, timeout, emit, watchdog = options.base_url, options.timeout, state.emit, state.watchdog
    requirements = list(plan.requirements("schema"))
    skip_body_checks_for = protocol_suite.streaming_operations
    known = known_path_values(plan, state)

    _keep_hypothesis_out_of_cwd()

    _read_form_files_as_text()
    _refusals_of_what_the_document_leaves_open()

    by_check = {sc.check: f"{spec.info.prefix}-SCHEMA-{sc.number}" for sc in SCHEMA_CHECKS}
    wanted = {r.id: r for r in requirements}
    config = schemathesis_config(
        spec,
        requirements,
        seed=options.seed,
        max_examples=options.max_examples,
        timeout=timeout,
        headers=plan.auth_headers,
        skip_body_checks_for=skip_body_checks_for,
        expected_statuses=protocol_suite.schema_expected_statuses,
        units=None if plan.options.shard.whole else plan.units_of("schema"),
        keep_examples=state.database is not None,
        independent_units=plan.options.depth in INDEPENDENT_DEPTHS,
    )
    # a stream labelled as its protocol's servers label it (NeuroSan's application/json-lines) is
    # the documented stream, not an undocumented content type
    aliases = {op_id: protocol_suite.stream_media_types for op_id in skip_body_checks_for}
    streamed = stream_labels(spec, skip_body_checks_for)
    item_streams = ItemStreams(spec)
    schema = spec.schemathesis_schema(config, server="/", media_aliases=aliases)
    schema.config.update(base_url=base_url.rstrip("/"))
    if known:
        schema.hooks.register_hook_with_name(_naming_existing(known), "flatmap_case")

    tally = SchemaTally.empty(wanted)
    started = time.monotonic()
    guard = state.guard
    stream = from_schema(schema).execute()
    with ExitStack() as stack:
        stack.enter_context(_environment_read_once())
        stack.enter_context(hypothesis_default(state.database))
        stack.enter_context(_open_cases(spec))
        stack.enter_context(seed_only())  # cases drawn from the seed, not from what the process imported
        stack.enter_context(
            stall_guard(
                guard,
                watchdog,
                timeout=timeout,
                max_bytes=plan.limits.max_body_bytes,
                stream_seconds=plan.limits.stream_seconds,
                stream_end=spec.info.stream_end,
            )
        )
        section = stack.enter_context(
            watchdog.graceful(stream.stop, state.budget.property_based(), "property-based phase's share of the budget")
        )
        for event in stream:
            if isinstance(event, events.Interrupted):
                tally.stopped = tally.stopped or f"{INTERRUPTED}: schemathesis was interrupted"
            _fold(event, events, tally.requirements, by_check, emit, streamed, item_streams)
            if isinstance(event, events.NonFatalError):
                # transport failures (timeouts, resets, garbage) land here, not in any check's verdict
                tally.errors += 1
                if " /" in event.label:
                    tally.unanswered.add(event.label.split(" ", 1)[1])
                if not tally.first_error:
                    tally.first_error = f"{event.label}: {event.info.title}: {event.info.message}".strip()
            elif isinstance(event, events.FatalError):
                tally.stopped = f"schemathesis stopped: {event.exception}"
                break
            elif isinstance(event, events.ScenarioFinished):
                tally.cases += len(event.recorder.cases)
                tally.answered.update(
                    guard.route(i.request.uri) for i in event.recorder.interactions.values() if i.response is not None
                )
        if not tally.stopped and watchdog.stopped is None and not section.cut:
            emit(StageStarted("schema", "targeted"))
            dealt = None if options.shard.whole else set(plan.units_of("schema"))
            tally.cases += run_targeted(
                (
                    c
                    for c in targeted.cases(spec, plan.schemas, known)
                    if dealt is None or f"{SCHEMA_STAGES[0]} {c.operation}" in dealt  # with its first stage
                ),
                Client(
                    base_url,
                    Limits(timeout=timeout, max_body_bytes=plan.limits.max_body_bytes),
                    plan.auth_headers,
                    guard=guard,
                ),
                tally.requirements,
                by_check,
                emit,
                deadline=started + state.budget.property_based(),
            )
    if watchdog.stopped is not None:
        tally.stopped = f"{watchdog.stopped.kind}: {watchdog.stopped.reason}"
    elif section.cut:
        tally.stopped = f"{BUDGET}: {section.cut}"
    tally.seconds = time.monotonic() - started
    tally.stall_silent, tally.stalls = guard.silent(), guard.summary()
    return schema_verdicts(requirements, tally), tally


def schema_verdicts(requirements: Iterable[Requirement], tally: SchemaTally) -> list[RequirementResult]:
    """Each requirement's verdict from what the phase (or all the shards' phases) counted."""
    stopped, errors = tally.stopped, tally.errors
    untested = f"{errors} operation run(s) got no usable answer; first: {tally.first_error}" if errors else ""
    # routes that never answered usably (they stalled, reset, sent garbage): a verdict that covers
    # only the routes that did answer would pass a target that hangs on all the others
    silent = sorted((tally.unanswered - tally.answered) | tally.stall_silent)
    results = []
    for req in requirements:
        t = tally.requirements.get(req.id, _Tally())
        total = t.passed + t.failed
        findings = t.findings.ordered()
        if t.failed:
            status = Status.FAILED
            top = findings[0] if findings else None
            message = f"{t.failed} of {total} cases failed"
            if top is not None:
                message += f"; {len(findings)} distinct failure(s); most frequent ({top.count}x): {top.message}"
        elif stopped:
            # a phase cut short decided nothing it did not fail: "passed so far" is not passed
            kind, _, why = stopped.partition(": ")
            status = Status.NOT_VERIFIED if kind in (INTERRUPTED, BUDGET, STOPPED_ANSWERING) else Status.ERROR
            message = f"not verified ({kind}): {why}" if status is Status.NOT_VERIFIED else stopped
            if t.passed:
                message += f" after {t.passed} generated cases checked"
        elif t.passed and not t.reached:
            status = Status.NOT_VERIFIED
            message = (
                f"not verified: none of the {t.passed} generated cases reached an operation "
                "(every answer was 404), so nothing exercised this check"
            )
        elif silent:
            status = Status.NOT_VERIFIED
            message = (
                f"not verified: {len(silent)} route(s) never gave a usable answer, so their operations were not "
                f"checked ({', '.join(silent)}); {t.passed} generated cases checked elsewhere; {untested}"
            )
        elif t.passed:
            status = Status.PASSED
            message = f"{t.passed} generated cases checked, {t.reached} of them reached their operation (not 404)"
            if untested:
                message += f" ({untested})"
        else:
            status = Status.ERROR if untested else Status.NOT_VERIFIED
            message = untested or "not verified: no generated case exercised this check against this target"
        evidence = [findings[0].evidence[-1]] if findings and findings[0].evidence else []
        results.append(RequirementResult(req, status, message, evidence, tally.seconds, total, findings))
    return results


def run_targeted(
    cases: Iterator[targeted.Targeted],
    client: Client,
    tallies: dict[str, _Tally],
    by_check: Mapping[str, str],
    emit: Callable[[Event], None],
    *,
    deadline: float,
) -> int:
    """Send the targeted cases (``targeted.py``) and fold their answers into the same tallies as the
    generated ones: a 2xx to a request the document forbids fails negative_data_rejection, a 5xx to
    any fails not_a_server_error. Returns how many were sent."""
    server_error, rejection = by_check["not_a_server_error"], by_check["negative_data_rejection"]
    wanted = [rid for rid in (server_error, rejection) if rid in tallies]
    sent = 0
    try:
        for case in cases:
            if not wanted or time.monotonic() > deadline:
                break
            headers = {"Content-Type": "application/json"} if case.body is not None else {}
            try:
                with client.stream(case.method, case.path, content=case.body, headers=headers) as answer:
                    status = answer.status
                    if not 200 <= status < 300:
                        answer.read()  # the error body is the evidence; an accepted stream is not waited out
            except TargetError:
                continue  # no usable answer: the generated cases' stall guard reports the route
            sent += 1
            exchange = client.log[-1]
            if status == 404 and case.negative:
                continue  # reached no operation
            failed = []
            judged = [rid for rid in wanted if case.negative or rid == server_error]
            for rid in judged:
                tally = tallies[rid]
                if rid == server_error:
                    bad, why = status >= 500, f"answered {status} to {case.what}"
                elif status >= 500:
                    continue  # not a rejection, and not this check's subject
                else:
                    bad, why = status < 400, f"accepted {case.what} with {status} (targeted case)"
                if bad:
                    tally.failed += 1
                    failed.append(rid)
                    tally.findings.add(
                        rid,
                        case.operation,
                        f"targeted:{case.what.split(' ', 1)[0]}",
                        f"{case.operation}: {why}",
                        [exchange],
                    )
                else:
                    tally.passed += 1
                    tally.reached += status != 404  # an id that names nothing reaches no operation
            emit(
                CaseFinished("targeted", case.operation, "failed" if failed else "passed", tuple(judged), tuple(failed))
            )
    finally:
        client.close()
    return sent


@contextmanager
def _environment_read_once() -> Iterator[None]:
    """``requests`` reads the environment's proxy settings (and ~/.netrc) again for every request:
    about a fifth of the phase's HTTP client time (bench/README.md). Within one phase neither
    changes, and both depend only on the URL's scheme and host, so each is read once per host
    here; the answers are the ones ``requests`` would get."""
    import requests.sessions

    sessions: Any = requests.sessions  # the names it looks up per request, replaced for the phase
    proxies, netrc = sessions.get_environ_proxies, sessions.get_netrc_auth

    @cache
    def proxies_for(origin: tuple[str, str], no_proxy: str | None) -> dict[str, str]:
        return dict(proxies(f"{origin[0]}://{origin[1]}/", no_proxy=no_proxy))

    @cache
    def netrc_for(origin: tuple[str, str]) -> Any:
        return netrc(f"{origin[0]}://{origin[1]}/")

    def environ_proxies(url: str, no_proxy: str | None = None) -> dict[str, str]:
        return dict(proxies_for(tuple(urlsplit(url)[:2]), no_proxy))

    def netrc_auth(url: str, raise_errors: bool = False) -> Any:
        if raise_errors:
            return netrc(url, raise_errors)
        return netrc_for(tuple(urlsplit(url)[:2]))

    sessions.get_environ_proxies, sessions.get_netrc_auth = environ_proxies, netrc_auth
    try:
        yield
    finally:
        sessions.get_environ_proxies, sessions.get_netrc_auth = proxies, netrc


def _keep_hypothesis_out_of_cwd() -> None:
    """Hypothesis keeps caches (unicode tables, constants) under ``./.hypothesis`` by default; the
    suite must not litter the user's working directory, so they go to the user's cache folder
    (``HYPOTHESIS_STORAGE_DIRECTORY`` still wins when set)."""
    import os
    from pathlib import Path

    from hypothesis.configuration import set_hypothesis_home_dir

    if "HYPOTHESIS_STORAGE_DIRECTORY" not in os.environ:
        cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
        set_hypothesis_home_dir(cache / "agent-conformance" / "hypothesis")


def _naming_existing(known: Mapping[str, tuple[str, ...]]) -> Callable[[Any, Any], Any]:
    """A schemathesis case hook: the first positive case of each operation whose path has a
    parameter the target holds a resource for names that resource (the discovered agent), so however
    few cases a setting draws, one reaches the operation (at --max-examples 1 and 2 every NeuroSan
    case was a 404, and NS-SCHEMA-005 was not verified). Nothing is drawn for it, so the cases keep
    the draws the schemathesis CLI makes on the same seed (a draw per case, whether to name it,
    shifted every later one and cost NeuroSan's engine 6-9 % against the CLI's); from that first
    answer schemathesis's own feedback carries the name into later cases, as the CLI's would. It is
    a ``flatmap_case`` hook returning the case itself: a ``before_generate_case`` hook mapping the
    whole strategy made NeuroSan's phase five times slower at ``--depth deep`` (bench/README.md
    section 3). A case whose path is deliberately invalid is left alone."""
    from hypothesis import strategies as st
    from schemathesis import GenerationMode

    ParameterLocation = internals.get("schemathesis.parameter_location")

    named: set[str] = set()

    def flatmap_case(context: Any, case: Any) -> Any:
        label = case.operation.label
        if label not in named:
            values = {n: known[n][0] for n in case.path_parameters if known.get(n)}
            component = case.meta.components.get(ParameterLocation.PATH) if case.meta is not None else None
            if values and component is not None and component.mode is GenerationMode.POSITIVE:
                named.add(label)
                object.__setattr__(case, "path_parameters", {**case.path_parameters, **values})
        return st.just(case)

    return flatmap_case


STREAM_MEDIA = ("text/event-stream", "application/x-ndjson", "application/jsonl", "application/json-lines")
"""Media types that document an answer as a stream."""


def stream_labels(spec: Spec, streaming_operations: Collection[str]) -> frozenset[str]:
    """The operations (by label, ``POST /path``) whose successful answer is a stream: the protocol's
    streaming operations and those whose 2xx documents a stream's media type. A stream's label is
    its protocol's stream requirement's fact (NS-STREAM-003, SGR-STREAM-001), judged with the
    labels its servers use; the content-type check leaves it to that one owner."""
    labels = set()
    for op in spec.operations():
        responses = op.definition.get("responses", {})
        media = {
            m
            for status, response in responses.items()
            if str(status).startswith("2")
            for m in (spec.resolve(response).get("content") or {})
        }
        if op.operation_id in streaming_operations or media & set(STREAM_MEDIA):
            labels.add(op.label)
    return frozenset(labels)


def _fold(
    event: Any,
    events: Any,
    tallies: dict[str, _Tally],
    by_check: dict[str, str],
    emit: Callable[[Event], None],
    streamed: Collection[str] = (),
    item_streams: ItemStreams | None = None,
) -> None:
    """One schemathesis event into the requirements' tallies (and the run's events). ``streamed``:
    the operations whose 2xx answer's label is their stream requirement's (``stream_labels``);
    ``item_streams``: the body check of an answer the document gives an event stream with an item
    schema is the kit's judgment of its events (``events.items``, the proxy's rule), not schemathesis's."""
    if isinstance(event, events.PhaseStarted):
        emit(StageStarted("schema", event.phase.name.value))
    if not isinstance(event, events.ScenarioFinished):
        return
    rec = event.recorder
    for case_id, nodes in rec.checks.items():
        checked: list[str] = []
        failed: list[str] = []
        undecided = False
        interaction = rec.interactions.get(case_id)
        answered = interaction is not None and interaction.response is not None
        reached = answered and interaction.response.status_code != 404
        stream = (
            answered and 200 <= interaction.response.status_code < 300 and _operation_label(rec, case_id) in streamed
        )
        items = item_streams.judged(_operation_label(rec, case_id), interaction) if item_streams and answered else None
        for node in nodes:
            rid = by_check.get(node.name)
            if rid is None or rid not in tallies or (stream and node.name == "content_type_conformance"):
                continue
            tally = tallies[rid]
            status = node.status.value
            if items is not None and node.name == "response_schema_conformance":
                if rid in checked:
                    continue  # the stream's events are judged once
                checked.append(rid)
                if items.problems:
                    tally.failed += 1
                    failed.append(rid)
                    _add_judged(tally.findings, rid, rec, case_id, items)
                else:
                    tally.passed += 1
                    tally.reached += reached
                continue
            if status == "failure" and _unlabelled(node):
                # the label is the content-type requirement's fact; schemathesis parsed the body as
                # the documented media type anyway, so the body's verdict is its other failures
                if _other_failures(node.name, nodes):
                    continue
                status = "success"
            checked.append(rid)
            if status == "success":
                tally.passed += 1
                tally.reached += reached
            elif status == "failure":
                tally.failed += 1
                failed.append(rid)
                if node.failure_info is not None:
                    _add_finding(tally.findings, rid, rec, case_id, node.failure_info)
            else:
                tally.errors += 1
                undecided = True
        if checked:
            emit(_case_finished(event.phase.value, rec, case_id, checked, failed, undecided))


def _unlabelled(node: Any) -> bool:
    """A body schema check's failure that is only the answer's missing Content-Type (matched by the
    failure class's name: this module imports schemathesis only inside a run)."""
    return (
        node.name == "response_schema_conformance"
        and node.failure_info is not None
        and type(node.failure_info.failure).__name__ == "MissingContentType"
    )


def _other_failures(name: str, nodes: Any) -> bool:
    return any(n.name == name and n.failure_info is not None and not _unlabelled(n) for n in nodes)


def _operation_label(rec: Any, case_id: str) -> str:
    node = rec.cases.get(case_id)
    return str(node.value.operation.label if node is not None else rec.label)


def _case_finished(
    stage: str, rec: Any, case_id: str, checked: list[str], failed: list[str], undecided: bool
) -> CaseFinished:
    node = rec.cases.get(case_id)
    operation = node.value.operation.label if node is not None else rec.label
    outcome = "failed" if failed else "error" if undecided else "passed"
    return CaseFinished(stage, operation, outcome, tuple(dict.fromkeys(checked)), tuple(dict.fromkeys(failed)))


def _kind(failure: Any) -> str:
    """schemathesis's failure code and its own grouping key (``ST101:500``); a key that is not a
    short token (a schema path, an exception origin) is digested, so the key stays one line."""
    unique = str(getattr(failure, "_unique_key", "") or "")
    if not unique:
        return str(failure.code)
    if re.fullmatch(r"[\w.:/-]{1,40}", unique):
        return f"{failure.code}:{unique}"
    return f"{failure.code}:{hashlib.sha1(unique.encode()).hexdigest()[:10]}"


def _add_finding(findings: FindingSet, rid: str, rec: Any, case_id: str, info: Any) -> None:
    failure = info.failure
    failing = failure.case_id or case_id
    node = rec.cases.get(failing)
    operation = failure.operation or (node.value.operation.label if node is not None else rec.label)
    chain: list[str] = []
    # each step with the cases it descends from (the create a stateful step's id was linked from),
    # so the finding replays from a fresh state; the failing case last
    for step in [*(s.case_id for s in info.steps if s.case_id != failing), failing]:
        for case in _lineage(rec, step):
            if case not in chain and case != failing:
                chain.append(case)
    chain.append(failing)
    evidence = [_exchange(rec.interactions[c]) for c in chain if c in rec.interactions]
    message = f"{operation}: {failure.title}: {failure.message}".strip()
    # a stateful step may name an object an earlier scenario made: its ids' origin is not known
    findings.add(rid, operation, _kind(failure), message, evidence, fresh=False)


def _add_judged(findings: FindingSet, rid: str, rec: Any, case_id: str, judged: Judged) -> None:
    """A stream whose events the kit's judgment found off the item schema: the finding names the
    judgment and its facts (replay judges today's stream by it)."""
    operation = _operation_label(rec, case_id)
    evidence = [_exchange(rec.interactions[c]) for c in _lineage(rec, case_id) if c in rec.interactions]
    message = f"{operation}: SSE event violates the item schema: {judged.problems[0]}"
    findings.add(
        rid, operation, events.ITEMS, message, evidence, fresh=False, judgment=events.ITEMS, facts=judged.facts
    )


def _lineage(rec: Any, case_id: str) -> list[str]:
    """``case_id`` and the cases it was derived from, the first ancestor first."""
    out: list[str] = []
    while case_id and case_id not in out and case_id in rec.cases:
        out.append(case_id)
        case_id = rec.cases[case_id].parent_id
    return out[::-1]


_DEFAULT_EXPECTED = {
    "not_a_server_error": ("2xx", "3xx", "4xx"),
    "positive_data_acceptance": ("2xx", "3xx", "401", "403", "404", "409", "429", "5xx"),
}
"""schemathesis 4's default ``expected-statuses`` of the checks a protocol may widen."""


_OPEN: dict[str, tuple[bool, dict[str, tuple[frozenset[str], frozenset[str]]]]] = {}
"""Of the document the phase runs on, per operation label: whether its request body is required,
and per media type the members its schema requires and declares (``_open_cases``)."""


@contextmanager
def _open_cases(spec: Spec) -> Iterator[None]:
    """What the document says of each operation's request body, for the fair-refusal judge."""
    bodies: dict[str, tuple[bool, dict[str, tuple[frozenset[str], frozenset[str]]]]] = {}
    for op in spec.operations():
        body = op.definition.get("requestBody")
        if not body:
            continue
        body = spec.resolve(body)
        media: dict[str, tuple[frozenset[str], frozenset[str]]] = {}
        for name, content in (body.get("content") or {}).items():
            schema = spec.resolve(content.get("schema") or {})
            media[name] = (frozenset(schema.get("required") or ()), frozenset(schema.get("properties") or ()))
        bodies[op.label] = (bool(body.get("required")), media)
    _OPEN.clear()
    _OPEN.update(bodies)
    try:
        yield
    finally:
        _OPEN.clear()


def left_open(label: str, body: Any, media_type: str | None) -> str:
    """Why a case schemathesis generated as valid is not one the document fixes as valid, or "":
    no body where the document leaves the body optional but its schema requires members (an
    upload with no file), or multipart parts the document does not declare (a part with an empty
    name, which multipart cannot carry as the schema's data says). A 4xx for such a case is a fair
    refusal, not a valid request rejected."""
    known = _OPEN.get(label)
    if known is None:
        return ""
    required, media = known
    if body is None:
        if not required and any(members for members, _ in media.values()):
            return "no body, where the body's schema requires members"
        return ""
    declared = media.get("multipart/form-data", (frozenset(), frozenset()))[1]
    if media_type and media_type.startswith("multipart/form-data") and isinstance(body, dict):
        odd = [name for name in body if not name or name not in declared]
        if odd:
            return f"multipart parts the document does not declare: {odd[:3]}"
    return ""


def _refusals_of_what_the_document_leaves_open() -> None:
    """schemathesis counts every case it generated as valid as one a server must accept; a 4xx
    for a case the document does not fix as valid (``left_open``) is a fair refusal and passes."""
    NOT_SET = internals.get("schemathesis.not_set")
    original = internals.get("schemathesis.positive_data_acceptance")
    if getattr(original, "fair_refusals", False):
        return

    def fair(ctx: Any, response: Any, case: Any) -> bool | None:
        body = None if case.body is NOT_SET else case.body
        if 400 <= response.status_code < 500 and left_open(case.operation.label, body, case.media_type):
            return None
        return original(ctx, response, case)  # type: ignore[no-any-return]

    fair.fair_refusals = True  # type: ignore[attr-defined]
    internals.replace("schemathesis.positive_data_acceptance", fair)


def _read_form_files_as_text() -> None:
    """Work around a false "accepted negative data" in schemathesis 4.32.x (found on Agent Protocol's
    upload). Before it blames a server for accepting a multipart body whose text field was given
    another type (on the wire every form field is text, so the server read a valid string), it
    re-validates the fields as sent; the file part's value is a ``Binary``, which jsonschema_rs
    refuses with an exception, and the exception counts as "invalid". Validating a file part as the
    string its schema (``type: string, format: binary``) describes gives the intended verdict."""
    Binary = internals.get("schemathesis.binary")
    original = internals.get("schemathesis.form_body_is_valid_as_sent", None)
    if original is None or getattr(original, "files_as_text", False):
        return

    def valid_as_sent(response: Any, case: Any, media_type: str) -> bool:
        body = case.body
        if not isinstance(body, dict) or not any(isinstance(v, Binary) for v in body.values()):
            return bool(original(response, case, media_type))
        object.__setattr__(case, "body", {k: str(v) if isinstance(v, Binary) else v for k, v in body.items()})
        try:
            return bool(original(response, case, media_type))
        finally:
            object.__setattr__(case, "body", body)

    valid_as_sent.files_as_text = True  # type: ignore[attr-defined]
    internals.replace("schemathesis.form_body_is_valid_as_sent", valid_as_sent)
