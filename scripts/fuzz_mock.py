"""Self-fuzz of the reference mock: schemathesis against every operation of every protocol.

    python scripts/fuzz_mock.py                          # the recorded run (docs/reliability.md)
    python scripts/fuzz_mock.py --max-examples 20 --budget 60 --protocol synapse-agent

Starts the mock in-process (``EmbeddedServer``, all four protocols on one 127.0.0.1 port) and runs
schemathesis's engine over each protocol's document: examples, coverage (negative and positive
boundary values), fuzzing (positive and negative data) and the stateful phase (links between
operations). Every response the engine receives, in every phase, passes through one registered
check, ``mock_self_fuzz_guard``, which records instead of raising (so no failure triggers
shrinking and re-sends) whether the response is

- a server error (any 5xx),
- leaking internals: a traceback, a source location (``File "...``), a filesystem path of the
  server or an exception class name that the request itself did not carry,
- a 4xx whose body is not the protocol's own error shape (Agent Protocol: an object with a string
  ``message``; NeuroSan: ``{code: int, message: str}``; SGR: ``{"detail": str | list}``;
  Synapse: ``{concreteType, reason}``) or not labelled JSON.

The check is registered only while a run lasts, so other schemathesis runs in the same process
(the conformance suite's schema phase) never see it. Writes a JSON summary with ``--output``.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run as a file: make the repository's packages importable
    sys.path.insert(0, str(ROOT))

from conformance.phases.schema.engine import _read_form_files_as_text  # noqa: E402
from mockserver import MockConfig  # noqa: E402
from mockserver.config import DEFAULT_TOKENS  # noqa: E402
from mockserver.embedded import EmbeddedServer  # noqa: E402
from specs.documents import PROTOCOLS, load  # noqa: E402


def token_headers(protocol: str) -> dict[str, str]:
    """A protocol whose document declares auth is called as the mock's first default user (the
    requests the coverage phase sends without it are 401s)."""
    if not load(protocol).raw.get("security"):
        return {}
    return {"Authorization": f"Bearer {next(iter(DEFAULT_TOKENS.values()))}"}


def named_values(protocol: str) -> Mapping[str, tuple[str, ...]]:
    """Names the document types as free strings but the mock only knows a few of (the protocol's
    test facts, tests/facts.py): drawn from these half the time, so generated requests reach the
    handlers (and their streams) as well as the 404/400 for unknown names."""
    from tests.facts import facts

    return facts(protocol).named_values


LEAK_MARKERS = (
    "Traceback (most recent call last)",
    'File "',
    str(ROOT),
    "site-packages",
    "/usr/lib/python",
    "/lib/python3",
    '.py", line',
    "mockserver/",
    "conformance/",
)
EXCEPTION_NAME = re.compile(r"\b(?:[A-Z][a-z0-9]+)+(?:Error|Exception)\b")
"""``RecursionError``, ``UnicodeEncodeError``...; ``ErrorResponse`` (Synapse's type) does not match."""
MAX_SAMPLES = 5


def shape_problem(protocol: str, status: int, content_type: str, body: bytes) -> str | None:
    """Why a 4xx body is not the protocol's error shape, as its manifest declares it (the body's
    template: ``$message`` a string, ``$code`` an integer, other values as written; the details,
    where the manifest puts some, a list), or None when it is."""
    if not content_type.split(";")[0].strip().lower().endswith("json"):
        return f"Content-Type {content_type!r} is not JSON"
    try:
        data = json.loads(body)
    except ValueError:
        return "body is not JSON"
    if not isinstance(data, dict):
        return f"body is a JSON {type(data).__name__}, not an object"
    shape = PROTOCOLS[protocol].error
    allowed = set(shape.body) | ({shape.details} if shape.details else set())
    ok = set(shape.body) <= set(data) <= allowed
    for key, template in shape.body.items() if ok else ():
        value = data[key]
        if template == "$message":
            ok = isinstance(value, str) or (key == shape.details and isinstance(value, list))
        elif template == "$code":
            ok = type(value) is int
        else:
            ok = value == template
        if not ok:
            break
    if ok and shape.details and shape.details not in shape.body and shape.details in data:
        ok = isinstance(data[shape.details], list)
    return None if ok else f"body {json.dumps(data)[:120]} is not the protocol's error shape"


def leak_problem(body: bytes, request_text: str) -> str | None:
    """An internal detail in a response body that the request text did not carry itself (echoes of
    what clients sent are not leaks)."""
    text = body.decode("utf-8", "replace")
    for marker in LEAK_MARKERS:
        at = text.find(marker)
        if at >= 0 and marker not in request_text:
            return f"body contains {marker!r}: ...{text[max(0, at - 60) : at + 60]!r}..."
    for found in EXCEPTION_NAME.finditer(text):
        if found.group(0) not in request_text:
            return f"body names the exception {found.group(0)!r}"
    return None


@dataclass
class ProtocolFuzz:
    """What one protocol's run saw."""

    protocol: str
    max_examples: int
    requests: int = 0
    """Responses received (every request the engine sent and got an answer to)."""
    cases: int = 0
    """Test cases the engine recorded (scenarios of the stateful phase count each step)."""
    operations: list[str] = field(default_factory=list)
    statuses: dict[str, int] = field(default_factory=dict)
    server_errors: int = 0
    """5xx answers the document does not prescribe for the operation."""
    documented_5xx: int = 0
    """5xx answers the document prescribes (SGR's 501 for ``stream: false``), shape-checked like 4xx."""
    leaks: int = 0
    shape_violations: int = 0
    transport_errors: int = 0
    samples: list[str] = field(default_factory=list)
    """Up to MAX_SAMPLES descriptions of the first problems (request line, status, what was wrong)."""
    transport_samples: list[str] = field(default_factory=list)
    phases: list[str] = field(default_factory=list)
    duration_s: float = 0.0
    stopped: str = ""

    @property
    def problems(self) -> int:
        return self.server_errors + self.leaks + self.shape_violations

    def absorb(self, other: ProtocolFuzz) -> None:
        """Add another run's counts (a top-up run over operations the budget left unreached)."""
        for name in (
            "requests",
            "cases",
            "server_errors",
            "documented_5xx",
            "leaks",
            "shape_violations",
            "transport_errors",
        ):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.operations = sorted({*self.operations, *other.operations})
        for status, count in other.statuses.items():
            self.statuses[status] = self.statuses.get(status, 0) + count
        self.samples = (self.samples + other.samples)[:MAX_SAMPLES]
        self.transport_samples = (self.transport_samples + other.transport_samples)[:MAX_SAMPLES]
        self.phases += [phase for phase in other.phases if phase not in self.phases]
        self.duration_s = round(self.duration_s + other.duration_s, 2)

    def summary(self) -> str:
        return (
            f"{self.protocol}: {self.requests} requests ({self.cases} cases) over {len(self.operations)} "
            f"operations in {self.duration_s:.1f} s; 5xx {self.server_errors} (+{self.documented_5xx} documented), "
            f"leaks {self.leaks}, "
            f"shape violations {self.shape_violations}, transport errors {self.transport_errors}"
            + (f"; stopped: {self.stopped}" if self.stopped else "")
        )


class _Collector:
    def __init__(self, result: ProtocolFuzz, documented: dict[tuple[str, str], set[int]]) -> None:
        self.result = result
        self.documented = documented
        self.lock = threading.Lock()
        self.statuses: Counter[str] = Counter()
        self.operations: set[str] = set()
        self.sent: list[str] = []
        """Leak markers and exception names earlier requests carried: lists and states echo what
        other requests stored, so a marker some request sent is an echo wherever it comes back."""

    def sample(self, text: str) -> None:
        if len(self.result.samples) < MAX_SAMPLES:
            self.result.samples.append(text)

    def record(self, response: Any, case: Any) -> None:
        request = response.request
        body = request.body or b""
        request_text = request.url + " " + (body.decode("utf-8", "replace") if isinstance(body, bytes) else str(body))
        status = int(response.status_code)
        headers = {k.lower(): v for k, v in response.headers.items()}
        content_type = ", ".join(headers.get("content-type", []))
        line = f"{request.method} {request.url} -> {status}"
        carried = [m for m in LEAK_MARKERS if m in request_text] + EXCEPTION_NAME.findall(request_text)
        with self.lock:
            self.sent.extend(m for m in carried if m not in self.sent)
            self.result.requests += 1
            self.statuses[f"{status // 100}xx"] += 1
            self.operations.add(case.operation.label)
            operation = case.operation
            prescribed = status in self.documented.get((operation.method.upper(), operation.path), set())
            if status >= 500 and prescribed:
                self.result.documented_5xx += 1
            elif status >= 500:
                self.result.server_errors += 1
                self.sample(f"{line}: server error {response.content[:200]!r}")
            leak = leak_problem(response.content, " ".join([request_text, *self.sent]))
            if leak is not None:
                self.result.leaks += 1
                self.sample(f"{line}: {leak}")
            if 400 <= status < 500 or (status >= 500 and prescribed):
                problem = shape_problem(self.result.protocol, status, content_type, response.content)
                if problem is not None:
                    self.result.shape_violations += 1
                    self.sample(f"{line}: {problem}")


_active: list[_Collector] = []
"""The collector of the run in progress (runs are sequential; the engine's workers share it)."""


def mock_self_fuzz_guard(ctx: Any, response: Any, case: Any) -> bool | None:
    """Records every response for the run in progress; never fails a case itself."""
    if _active:
        _active[-1].record(response, case)
    return None


@contextmanager
def _guard_registered() -> Iterator[None]:
    import schemathesis
    from schemathesis.checks import CHECKS

    if mock_self_fuzz_guard.__name__ not in CHECKS.get_all_names():
        schemathesis.check(mock_self_fuzz_guard)
    try:
        yield
    finally:
        CHECKS.unregister(mock_self_fuzz_guard.__name__)


def documented_server_errors(raw: dict[str, Any]) -> dict[tuple[str, str], set[int]]:
    """(METHOD, path) -> the 5xx statuses the document lists for that operation."""
    found: dict[tuple[str, str], set[int]] = {}
    for path, item in raw.get("paths", {}).items():
        for method, operation in item.items():
            if isinstance(operation, dict) and "responses" in operation:
                statuses = {int(s) for s in operation["responses"] if s.isdigit() and s.startswith("5")}
                found[(method.upper(), path)] = statuses
    return found


def fuzz_protocol(
    protocol: str,
    server_url: str,
    *,
    max_examples: int,
    seed: int = 0,
    budget_s: float = 60.0,
    timeout: float = 10.0,
    operations: tuple[str, ...] = (),
    progress: Callable[[str], None] = lambda _: None,
) -> ProtocolFuzz:
    """One schemathesis run (all phases, positive and negative data) over ``protocol``'s document,
    against the mock at ``server_url`` (its root: the document's base path is added here);
    ``operations`` (operationIds) narrows it."""
    from schemathesis.checks import CHECKS, load_all_checks
    from schemathesis.engine import events, from_schema

    _read_form_files_as_text()
    load_all_checks()
    spec = load(protocol)
    result = ProtocolFuzz(protocol, max_examples)
    with _guard_registered():
        # only the guard: the conformance suite's own checks are the schema phase's business
        checks: dict[str, Any] = {name: {"enabled": False} for name in CHECKS.get_all_names()}
        checks[mock_self_fuzz_guard.__name__] = {"enabled": True}
        checks.pop("max_response_time", None)  # a number, not a switch; unset means off
        for name in (
            "missing_required_header",
            "unsupported_method",
            "allow_header_conformance",
            "object_level_authorization",
        ):
            checks[name] = {"enabled": False}
        config: dict[str, Any] = {
            "seed": seed,
            "request-timeout": timeout,
            "headers": token_headers(protocol),
            "generation": {"max-examples": max_examples, "mode": "all"},
            "phases": {"stateful": {"enabled": True}},
            "checks": checks,
            "suppress-health-check": ["all"],
        }
        named = named_values(protocol)
        if named:
            config["dictionaries"] = {key.replace(".", "-"): {"values": list(values)} for key, values in named.items()}
            config["parameters"] = {key: {"dictionary": key.replace(".", "-"), "probability": 0.5} for key in named}
        schema: Any = spec.schemathesis_schema(config, server="/")
        schema.config.update(base_url=server_url.rstrip("/") + spec.info.base_path)
        if operations:
            schema = schema.include(operation_id=list(operations))
        collector = _Collector(result, documented_server_errors(spec.raw))
        _active.append(collector)
        started = time.monotonic()
        try:
            stream = from_schema(schema).execute()
            for event in stream:
                if time.monotonic() - started > budget_s and not result.stopped:
                    result.stopped = f"time budget of {budget_s:g} s ran out"
                    stream.stop()
                if isinstance(event, events.PhaseStarted):
                    result.phases.append(event.phase.name.value)
                    progress(f"{protocol}: {event.phase.name.value} phase")
                elif isinstance(event, events.NonFatalError):
                    result.transport_errors += 1
                    if len(result.transport_samples) < MAX_SAMPLES:
                        result.transport_samples.append(f"{event.label}: {event.info.title}: {event.info.message}")
                elif isinstance(event, events.FatalError):
                    result.stopped = f"schemathesis stopped: {event.exception}"
                    break
                elif isinstance(event, events.ScenarioFinished):
                    result.cases += len(event.recorder.cases)
        finally:
            _active.remove(collector)
        result.duration_s = round(time.monotonic() - started, 2)
        result.operations = sorted(collector.operations)
        result.statuses = dict(sorted(collector.statuses.items()))
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--protocol", action="append", choices=sorted(PROTOCOLS), help="repeatable; default: all four")
    parser.add_argument("--max-examples", type=int, default=200, help="per operation and phase")
    parser.add_argument("--budget", type=float, default=150.0, help="seconds per protocol")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--output", type=Path, help="write the figures as JSON here")
    args = parser.parse_args(argv)
    protocols = args.protocol or sorted(PROTOCOLS)
    results = []
    started = time.monotonic()
    with EmbeddedServer(MockConfig(job_seconds=0.05)) as server:
        for protocol in protocols:
            result = fuzz_protocol(
                protocol,
                server.url,
                max_examples=args.max_examples,
                seed=args.seed,
                budget_s=args.budget,
                progress=lambda m: print(m, file=sys.stderr),
            )
            results.append(result)
            print(result.summary())
            for sample in result.samples + result.transport_samples:
                print(f"  {sample}")
    total = time.monotonic() - started
    problems = sum(r.problems for r in results)
    print(f"total: {sum(r.requests for r in results)} requests in {total:.1f} s; {problems} problem(s)")
    if args.output:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(
            json.dumps(
                {
                    "seed": args.seed,
                    "max_examples": args.max_examples,
                    "budget_s_per_protocol": args.budget,
                    "duration_s": round(total, 1),
                    "protocols": [asdict(r) for r in results],
                },
                indent=2,
            )
            + "\n"
        )
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
