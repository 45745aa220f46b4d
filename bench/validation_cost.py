"""Validation cost: microseconds per request + response validated by the mock's path vs openapi-core.

    python bench/validation_cost.py              # full run
    python bench/validation_cost.py --rounds 3 --round-seconds 0.05   # a quick look

Same payloads, same document (Agent Protocol), both starting from the raw bytes:
  ours         mockserver.validation.OperationValidator (query parameters and the JSON body of an
               aiohttp request, json.loads included) + specs.schemas.SchemaSet for the
               response (json.loads + the compiled jsonschema-rs validator of the 200 schema).
               Route matching is not included: aiohttp's router has done it before the validator runs.
  openapi-core OpenAPI.validate_request + validate_response (and unmarshal_*), on openapi-core's
               MockRequest/MockResponse; includes finding the operation from the path.
Each case is checked first: both sides must agree on the verdict (valid, or rejected).
timeit-style: rounds of N iterations (N calibrated to --round-seconds); the best round is reported
and the median alongside. Writes bench/results/validation_cost.{json,md}.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import gc
import io
import json
import pstats
import statistics
import sys
import time
import warnings
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from _common import CLIENT_CPU, RESULTS, LoadMeter, machine, pin_self, wait_quiet, write_json
from aiohttp import web
from aiohttp.test_utils import make_mocked_request
from openapi_core.testing import MockRequest, MockResponse

from mockserver.api import _with_parameters_resolved
from mockserver.errors import ApiError
from mockserver.validation import OperationValidator
from specs.documents import Spec, load
from specs.schemas import SchemaSet

warnings.filterwarnings("ignore", category=DeprecationWarning)

HOST_URL = "http://0.0.0.0:8000"  # the document's server, which openapi-core matches requests against
BASE = "/ap/v1/agent/tasks"


class _Body:
    """Stands in for ``request.content``: the bytes, then end of body; ``rewind`` serves them again,
    so one request object is reused for every iteration."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.done = False

    async def read(self, n: int = -1) -> bytes:
        if self.done:
            return b""
        self.done = True
        return self.data if n < 0 else self.data[:n]

    def rewind(self) -> None:
        self.done = False


@dataclass(frozen=True, slots=True)
class Case:
    name: str
    operation_id: str
    method: str
    query: dict[str, str]
    request_body: bytes | None
    response_body: bytes | None
    valid: bool


def task(number: int, artifacts: int = 0, extra: Any = None) -> dict[str, Any]:
    return {
        "task_id": f"50da533e-3904-4401-8a07-c49adf{number:06d}",
        "input": f"Write 'Washington' to the file 'output.txt'. Task {number}.",
        "additional_input": extra if extra is not None else {"debug": False, "mode": "benchmarks"},
        "artifacts": [
            {
                "artifact_id": f"b225e278-8b4c-4f99-a696-8facf1{number:03d}{a:03d}",
                "agent_created": a % 2 == 0,
                "file_name": f"file_{a}.txt",
                "relative_path": f"out/{number}/",
            }
            for a in range(artifacts)
        ],
    }


def large_input() -> dict[str, Any]:
    """About 16 KB of nested JSON, as a client passing a document along with its task might send."""
    return {
        "mode": "benchmarks",
        "records": [
            {
                "id": i,
                "name": f"record {i}",
                "tags": ["alpha", "beta", "gamma"],
                "score": i * 0.5,
                "nested": {"enabled": i % 2 == 0, "notes": "x" * 40},
            }
            for i in range(100)
        ],
    }


def dumps(obj: Any) -> bytes:
    return json.dumps(obj, separators=(",", ":")).encode()


def cases() -> list[Case]:
    small_req = {
        "input": "Write 'Washington' to the file 'output.txt'.",
        "additional_input": {"debug": False, "mode": "benchmarks"},
    }
    big = large_input()
    page = {
        "tasks": [task(n, artifacts=2) for n in range(100)],
        "pagination": {"total_items": 100, "total_pages": 1, "current_page": 1, "page_size": 100},
    }
    return [
        Case("create task (small)", "createAgentTask", "post", {}, dumps(small_req), dumps(task(1)), True),
        Case(
            "create task (16 KB additional_input)",
            "createAgentTask",
            "post",
            {},
            dumps({"input": "Summarize the records.", "additional_input": big}),
            dumps(task(2, extra=big)),
            True,
        ),
        Case(
            "list tasks (page of 100 tasks, 2 artifacts each)",
            "listAgentTasks",
            "get",
            {"current_page": "1", "page_size": "100"},
            None,
            dumps(page),
            True,
        ),
        Case(
            "create task, invalid body (rejected; request only)",
            "createAgentTask",
            "post",
            {},
            dumps({"input": 42, "additional_input": []}),
            None,
            False,
        ),
    ]


# --- the two sides ----------------------------------------------------------------------------


class Ours:
    """The mock's request validator and the suite's response validator, as they run in production."""

    def __init__(self, spec: Spec) -> None:
        self.spec = spec
        self.schemas = SchemaSet(spec.raw)
        self.validators: dict[str, OperationValidator] = {}
        self.response_schemas: dict[str, Any] = {}
        for op_id in ("createAgentTask", "listAgentTasks"):
            op = spec.operation(op_id)
            path_item = _with_parameters_resolved(spec.raw, spec.raw["paths"][op.path])
            definition = _with_parameters_resolved(spec.raw, op.definition)
            self.validators[op_id] = OperationValidator(
                "agent-protocol", definition, path_item, self.schemas, 1 << 20, 10 << 20
            )
            self.response_schemas[op_id] = op.definition["responses"]["200"]["content"]["application/json"]["schema"]

    def prepare(self, case: Case) -> Callable[[], Awaitable[bool]]:
        validator = self.validators[case.operation_id]
        schema = self.response_schemas[case.operation_id]
        schemas = self.schemas
        query = "&".join(f"{k}={v}" for k, v in case.query.items())
        headers = {}
        payload: _Body | None = None
        if case.request_body is not None:
            headers = {"Content-Type": "application/json", "Content-Length": str(len(case.request_body))}
            payload = _Body(case.request_body)
        extra: dict[str, Any] = {"payload": payload} if payload is not None else {}
        request: web.Request = make_mocked_request(
            case.method.upper(), BASE + (f"?{query}" if query else ""), headers=headers, **extra
        )
        response_body = case.response_body

        async def once() -> bool:
            if payload is not None:
                payload.rewind()
            try:
                validator.parameters(request)
                await validator.body(request)
            except ApiError:
                return False
            if response_body is not None:
                return not schemas.violations(schema, json.loads(response_body))
            return True

        return once


class OpenApiCore:
    def __init__(self, spec: Spec, unmarshal: bool) -> None:
        self.openapi = spec.openapi
        self.unmarshal = unmarshal

    def prepare(self, case: Case) -> Callable[[], Awaitable[bool]]:
        request = MockRequest(HOST_URL, case.method, BASE, args=dict(case.query) or None, data=case.request_body)
        response = MockResponse(case.response_body) if case.response_body is not None else None
        openapi = self.openapi

        if self.unmarshal:

            async def once() -> bool:
                if openapi.unmarshal_request(request).errors:
                    return False
                return response is None or not openapi.unmarshal_response(request, response).errors

            return once

        async def validate() -> bool:
            try:
                openapi.validate_request(request)
                if response is not None:
                    openapi.validate_response(request, response)
            except Exception:  # openapi-core raises its own ValidationError subclasses
                return False
            return True

        return validate


# --- timing -----------------------------------------------------------------------------------


async def time_it(once: Callable[[], Awaitable[bool]], rounds: int, round_seconds: float) -> dict[str, float]:
    """Per-call microseconds: best and median of ``rounds`` rounds, N calibrated to ``round_seconds``."""
    number = 1
    while True:  # calibrate: double until one round takes long enough (bounded at 2^20 calls)
        start = time.perf_counter()
        for _ in range(number):
            await once()
        if time.perf_counter() - start >= round_seconds / 4 or number >= 1 << 20:
            break
        number *= 2
    per_round = max(1, int(number * round_seconds / max(time.perf_counter() - start, 1e-9)))
    samples = []
    gc_was = gc.isenabled()
    gc.disable()
    try:
        for _ in range(rounds):
            start = time.perf_counter()
            for _ in range(per_round):
                await once()
            samples.append((time.perf_counter() - start) / per_round * 1e6)
    finally:
        if gc_was:
            gc.enable()
    return {
        "best_us": round(min(samples), 2),
        "median_us": round(statistics.median(samples), 2),
        "calls_per_round": per_round,
        "rounds": rounds,
    }


async def run(args: argparse.Namespace) -> dict[str, Any]:
    spec = load("agent-protocol")
    sides: dict[str, Any] = {
        "ours": Ours(spec),
        "openapi-core validate": OpenApiCore(spec, unmarshal=False),
        "openapi-core unmarshal": OpenApiCore(spec, unmarshal=True),
    }
    out: dict[str, Any] = {}
    for case in cases():
        row: dict[str, Any] = {
            "request_bytes": len(case.request_body or b""),
            "response_bytes": len(case.response_body or b""),
            "expected_valid": case.valid,
        }
        for side_name, side in sides.items():
            once = side.prepare(case)
            verdict = await once()
            if verdict != case.valid:
                raise RuntimeError(f"{side_name} says valid={verdict} for {case.name!r}; expected {case.valid}")
            row[side_name] = await time_it(once, args.rounds, args.round_seconds)
        ours = row["ours"]["best_us"]
        row["speedup_vs_validate"] = round(row["openapi-core validate"]["best_us"] / ours, 1)
        row["speedup_vs_unmarshal"] = round(row["openapi-core unmarshal"]["best_us"] / ours, 1)
        out[case.name] = row
        print(
            f"{case.name:52} ours {ours:9.1f} us   openapi-core validate "
            f"{row['openapi-core validate']['best_us']:9.1f} us ({row['speedup_vs_validate']}x)   unmarshal "
            f"{row['openapi-core unmarshal']['best_us']:9.1f} us ({row['speedup_vs_unmarshal']}x)",
            flush=True,
        )
    return out


async def profile_ours(calls: int) -> str:
    """cProfile's top lines for our side on each valid case (deterministic, so absolute times inflate)."""
    ours = Ours(load("agent-protocol"))
    parts = []
    for case in cases():
        once = ours.prepare(case)
        profiler = cProfile.Profile()
        profiler.enable()
        for _ in range(calls):
            await once()
        profiler.disable()
        out = io.StringIO()
        pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(10)
        body = out.getvalue().strip().splitlines()
        start = next((i for i, line in enumerate(body) if "ncalls" in line), 0)
        parts.append(f"## {case.name}: {calls} calls, cProfile, sorted by own time\n" + "\n".join(body[start:]))
    return "\n\n".join(parts) + "\n"


def table(results: dict[str, Any]) -> str:
    rows = [
        "| payload (request + response bytes) | ours µs | openapi-core validate µs | ratio | "
        "openapi-core unmarshal µs | ratio |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for name, r in results.items():
        rows.append(
            f"| {name} ({r['request_bytes']:,} + {r['response_bytes']:,} B) | {r['ours']['best_us']:,.1f} | "
            f"{r['openapi-core validate']['best_us']:,.1f} | {r['speedup_vs_validate']}x | "
            f"{r['openapi-core unmarshal']['best_us']:,.1f} | {r['speedup_vs_unmarshal']}x |"
        )
    return "\n".join(rows) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=7, help="timed rounds per case and side (default 7)")
    parser.add_argument("--round-seconds", type=float, default=0.5, help="target length of one round (default 0.5)")
    parser.add_argument("--output", default="validation_cost", help="results file stem under bench/results/")
    parser.add_argument("--profile", action="store_true", help="also write cProfile top lines for our side")
    parser.add_argument("--quiet-wait", type=float, default=180.0, help="wait up to this long for an idle machine")
    args = parser.parse_args(argv)
    if not 1 <= args.rounds <= 50 or not 0 < args.round_seconds <= 5:
        parser.error("keep it bounded: 1 <= --rounds <= 50, 0 < --round-seconds <= 5")
    pin_self(CLIENT_CPU)
    facts = machine()
    facts["before_start"] = wait_quiet(args.quiet_wait)
    with LoadMeter() as load:
        results = asyncio.run(run(args))
    facts["other_load_cores_during_run"] = load.other_cores
    text = table(results)
    print("\n" + text)
    write_json(f"{args.output}.json", {"machine": facts, "settings": vars(args), "results": results})
    if args.profile:
        path = RESULTS / "profile-validation.txt"
        path.write_text(asyncio.run(profile_ours(300)))
        print(f"profile written to {path.relative_to(RESULTS.parent.parent)}")
    (RESULTS / f"{args.output}.md").write_text(
        f"# Validation cost ({facts['date']})\n\nBest of {args.rounds} rounds "
        f"of ~{args.round_seconds:g} s; ratio = openapi-core / ours.\n\n" + text
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
