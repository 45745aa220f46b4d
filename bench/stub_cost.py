"""What loaded stubs cost the mock when none of them matches, side by side in one run.

    python bench/stub_cost.py                      # 7 rounds of 3 s per measurement
    python bench/stub_cost.py --duration 2 --warmup 1 --rounds 1   # a quick look

Two servers, each a subprocess pinned to CPU 0, loaded in turn by wrk pinned to CPU 1 (the order
rotated per round, both up at once so that a neighbour's load hits each alike):
  plain    python -m mockserver
  stubbed  python -m mockserver --stubs FILE: a client developer's document that matches none of
           the measured requests: 10 stubs on each measured operation (query and body predicates
           that fail), 5 on every other operation of every protocol, and data stubs for all four
           protocols (a step plan, a network, a model, a job outcome)
for a read (GET listAgentTasks, 5 tasks stored) and a write (POST createAgentTask): requests/s and
server CPU µs per request, each round's ratio taken from two runs seconds apart (median and IQR).

First, in process and robust to a busy machine: each operation's endpoint, as the router holds it,
called directly on prepared requests in an app with the stubs and one without, A/B interleaved
over many repeats: the µs the stubs add to a call (the difference of the minimums). The verdict
is that figure over the plain mock's whole server CPU µs per request (the wrk rounds): the share
of requests/s the stubs cost (target: at most 3 %). Writes bench/results/stub_cost.{json,md}.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import statistics
import sys
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from aiohttp.base_protocol import BaseProtocol

from _common import (
    ROOT,
    SCENARIOS,
    SERVER_CPU,
    STORED_TASKS,
    TASK_BODY,
    LoadMeter,
    Server,
    free_port,
    http,
    lua_script,
    machine,
    mock_command,
    require_wrk,
    rotated,
    run_wrk,
    sanity,
    server,
    wait_quiet,
    write_json,
    write_table,
    wrk_settings,
)

if str(ROOT) not in sys.path[:1]:
    sys.path.insert(0, str(ROOT))  # this checkout's mockserver, not an installed one

VARIANTS = ("plain", "stubbed")
MEASURED = ("read", "write")
TARGET = 0.97
"""The issue's bound: stubs that match nothing cost at most 3 % of requests/s."""


def stubs_document() -> dict[str, Any]:
    from specs.documents import load

    stubs: list[dict[str, Any]] = []
    for number in range(10):
        stubs.append(
            {
                "request": {
                    "protocol": "agent-protocol",
                    "operation": "listAgentTasks",
                    "query": {"page_size": 90 + number},
                },
                "response": {"error": {"status": 404, "message": "never"}},
            }
        )
        stubs.append(
            {
                "request": {
                    "protocol": "agent-protocol",
                    "operation": "createAgentTask",
                    "body": [{"pointer": "/input", "equals": f"never {number}"}],
                },
                "response": {"error": {"status": 422, "message": "never"}},
            }
        )
    for protocol in ("agent-protocol", "neuro-san", "sgr-agent-core", "synapse-agent"):
        for op in load(protocol).operations():
            if op.operation_id in ("listAgentTasks", "createAgentTask"):
                continue
            for number in range(5):
                stubs.append(
                    {
                        "request": {
                            "protocol": protocol,
                            "operation": op.operation_id,
                            "headers": {"X-Never": str(number)},
                        },
                        "response": {"status": 200, "body": {}, "invalid": True},
                    }
                )
    data = {
        "agent-protocol": {"plans": [{"input": {"contains": "never"}, "steps": 3}]},
        "neuro-san": {"networks": [{"name": "bench_bot", "answer": "never"}]},
        "sgr-agent-core": {"models": [{"name": "bench_model", "reply": "never"}]},
        "synapse-agent": {"jobs": [{"chatText": "never", "responseText": "never"}]},
    }
    return {"stubs": stubs, "data": data}


@contextlib.contextmanager
def start(variant: str, scripts: Path) -> Iterator[Server]:
    port = free_port()
    extra: list[str] = []
    if variant == "stubbed":
        path = scripts / "stubs.json"
        path.write_text(json.dumps(stubs_document()))
        extra = ["--stubs", str(path)]
    with server(variant, mock_command(port, *extra), port, SERVER_CPU, scripts / f"{variant}.log") as srv:
        for _ in range(STORED_TASKS):
            status, _ = http("POST", srv.url + "/ap/v1/agent/tasks", TASK_BODY)
            if status != 200:
                raise RuntimeError(f"seeding {variant} failed with {status}")
        yield srv


def cpu_ns(pid: int) -> int:
    total = 0
    for stat in Path(f"/proc/{pid}/task").glob("*/schedstat"):
        with contextlib.suppress(OSError, ValueError, IndexError):
            total += int(stat.read_text().split()[0])
    return total


def one_run(srv: Server, url: str, lua: Path, args: argparse.Namespace) -> dict[str, Any]:
    before = cpu_ns(srv.pid)
    with LoadMeter([srv.pid]) as load:
        stats, _ = run_wrk(url, lua, args.duration, args.threads, args.connections)
    used = cpu_ns(srv.pid) - before
    requests = max(1, stats["requests"])
    return {
        "rps": round(stats["requests"] / (stats["duration_us"] / 1e6), 1),
        "cpu_us_per_request": round(used / 1000 / requests, 2),
        "errors": sum(v for k, v in stats.items() if k.startswith("errors_")),
        "other_load_cores": load.other_cores,
    }


def spread(values: Sequence[float]) -> dict[str, float]:
    ordered = sorted(values)
    return {
        "median": round(statistics.median(ordered), 3),
        "q1": round(ordered[len(ordered) // 4], 3),
        "q3": round(ordered[(3 * len(ordered)) // 4], 3),
    }


def measure_all(args: argparse.Namespace, scripts: Path) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for scenario in (s for s in SCENARIOS if s.name in MEASURED):
        lua = scripts / f"{scenario.name}.lua"
        lua.write_text(lua_script(scenario))
        runs: dict[str, list[dict[str, Any]]] = {v: [] for v in VARIANTS}
        print(f"{scenario.name}:", flush=True)
        with contextlib.ExitStack() as stack:
            servers = {v: stack.enter_context(start(v, scripts)) for v in VARIANTS}
            for srv in servers.values():
                sanity(srv, scenario)
                if args.warmup > 0:
                    run_wrk(srv.url + scenario.path, lua, args.warmup, args.threads, args.connections)
            for number in range(args.rounds):
                for variant in rotated(VARIANTS, number):
                    runs[variant].append(one_run(servers[variant], servers[variant].url + scenario.path, lua, args))
                last = {v: runs[v][-1] for v in VARIANTS}
                print(
                    "  round {}: req/s {}   CPU µs/req {}   other load {} cores".format(
                        number + 1,
                        "  ".join(f"{v} {r['rps']:7.0f}" for v, r in last.items()),
                        "  ".join(f"{v} {r['cpu_us_per_request']:6.1f}" for v, r in last.items()),
                        "/".join(f"{r['other_load_cores']:.2f}" for r in last.values()),
                    ),
                    flush=True,
                )
        pairs = list(zip(runs["plain"], runs["stubbed"], strict=True))
        out[scenario.name] = {
            "runs": runs,
            "rps_ratio": spread([s["rps"] / p["rps"] for p, s in pairs]),
            "cpu_ratio": spread([s["cpu_us_per_request"] / p["cpu_us_per_request"] for p, s in pairs]),
            "rps": {v: spread([r["rps"] for r in rs]) for v, rs in runs.items()},
            "cpu_us_per_request": {v: spread([r["cpu_us_per_request"] for r in rs]) for v, rs in runs.items()},
            "other_load_cores": spread([r["other_load_cores"] for rs in runs.values() for r in rs]),
            "errors": sum(r["errors"] for rs in runs.values() for r in rs),
        }
    return out


def in_process(calls: int, repeats: int) -> dict[str, dict[str, Any]]:
    """µs per endpoint call with the stubs loaded and without, A/B interleaved."""
    import asyncio
    import time

    from aiohttp import streams
    from aiohttp.test_utils import make_mocked_request

    from mockserver import MockConfig, create_app
    from specs import heap

    document = stubs_document()
    body = json.dumps(TASK_BODY).encode()

    def request(app: Any, method: str, path: str) -> Any:
        if method == "GET":
            return make_mocked_request(method, path, app=app)
        # flow control is all a payload fed whole asks of its protocol: _Protocol stands in for one
        payload = streams.StreamReader(cast("BaseProtocol", _Protocol()), 2**16, loop=asyncio.get_running_loop())
        payload.feed_data(body)
        payload.feed_eof()
        headers = {"Content-Type": "application/json", "Content-Length": str(len(body))}
        return make_mocked_request(method, path, headers=headers, payload=payload, app=app)

    async def run(method: str, path: str) -> dict[str, Any]:
        apps = {name: create_app(MockConfig(stubs=document if name == "stubbed" else None)) for name in VARIANTS}
        handlers: dict[tuple[str, str], Any] = {}
        for name, app in apps.items():
            for route in app.router.routes():
                if route.resource is not None and route.resource.canonical == path:
                    handlers[(name, route.method)] = route.handler
            for _ in range(STORED_TASKS):  # the read lists real tasks, as the wrk rounds' does
                await handlers[(name, "POST")](request(app, "POST", path))
        # as the server does once started (mockserver/__main__.py): start-up's objects, the parsed
        # stubs among them, out of the collector's sight, and the young generation collected less often
        heap.settle()
        samples: dict[str, list[float]] = {name: [] for name in VARIANTS}
        for number in range(repeats + 1):
            for name in sorted(VARIANTS, reverse=bool(number % 2)):  # A/B, then B/A
                prepared = [request(apps[name], method, path) for _ in range(calls)]
                started = time.perf_counter_ns()
                for each in prepared:
                    response = await handlers[(name, method)](each)
                elapsed = (time.perf_counter_ns() - started) / calls / 1000
                if response.status != 200:
                    raise RuntimeError(f"{name} {method} {path} answered {response.status}")
                if number:  # the first is a warm-up
                    samples[name].append(elapsed)
        return {
            **{
                name: {"min_us": round(min(v), 3), "median_us": round(statistics.median(v), 3)}
                for name, v in samples.items()
            },
            "added_us": round(min(samples["stubbed"]) - min(samples["plain"]), 3),
        }

    cases = {"read": ("GET", "/ap/v1/agent/tasks"), "write": ("POST", "/ap/v1/agent/tasks")}
    return {name: asyncio.run(run(*case)) for name, case in cases.items()}


class _Protocol:
    """What aiohttp's StreamReader asks of its protocol (flow control), for a payload fed whole."""

    _reading_paused = False

    def pause_reading(self, **_: Any) -> None:
        pass

    def resume_reading(self, **_: Any) -> None:
        pass


def verdict_table(inside: dict[str, Any], results: dict[str, Any]) -> str:
    rows = [
        "In process: µs per endpoint call (minimum over the interleaved repeats), and the share of the plain "
        "mock's whole server CPU per request (wrk rounds' median) the stubs add\n",
        "| operation | plain µs/call | stubbed µs/call | added µs | plain server CPU µs/req | cost | verdict |",
        "|---|---:|---:|---:|---:|---:|---|",
    ]
    for name, r in inside.items():
        cpu = results[name]["cpu_us_per_request"]["plain"]["median"]
        share = max(r["added_us"], 0.0) / cpu
        verdict = "meets" if share <= 1 - TARGET else "misses"
        rows.append(
            f"| {name} | {r['plain']['min_us']:.2f} | {r['stubbed']['min_us']:.2f} | {r['added_us']:.2f} | {cpu:.1f} "
            f"| {100 * share:.1f} % | {verdict} the 3 % bound |"
        )
    return "\n".join(rows) + "\n"


def table(results: dict[str, Any], rounds: int) -> str:
    rows = [
        f"wrk: stubbed / plain, {rounds} rounds (median, IQR); the stubs match none of the requests\n",
        "| operation | plain req/s | stubbed req/s | req/s ratio | plain CPU µs/req | stubbed CPU µs/req "
        "| CPU ratio | other load (cores) | verdict |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for name, r in results.items():
        ratio = r["rps_ratio"]
        verdict = "meets" if ratio["median"] >= TARGET else "misses"
        rows.append(
            f"| {name} | {r['rps']['plain']['median']:.0f} | {r['rps']['stubbed']['median']:.0f} "
            f"| {ratio['median']:.3f} ({ratio['q1']:.3f}-{ratio['q3']:.3f}) "
            f"| {r['cpu_us_per_request']['plain']['median']:.1f} | {r['cpu_us_per_request']['stubbed']['median']:.1f} "
            f"| {r['cpu_ratio']['median']:.3f} ({r['cpu_ratio']['q1']:.3f}-{r['cpu_ratio']['q3']:.3f}) "
            f"| {r['other_load_cores']['median']:.2f} | {verdict} the {TARGET:.2f} bound |"
        )
    return "\n".join(rows) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--duration", type=float, default=3.0, help="seconds per measured wrk run (default 3)")
    parser.add_argument("--warmup", type=float, default=1.0, help="seconds of unmeasured load first (default 1)")
    parser.add_argument("--rounds", type=int, default=7, help="rounds, each variant once, order rotated (7)")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--connections", type=int, default=50)
    parser.add_argument("--quiet-wait", type=float, default=60.0, help="seconds to wait for a quiet machine (60)")
    parser.add_argument("--calls", type=int, default=200, help="in-process calls per repeat (default 200)")
    parser.add_argument("--repeats", type=int, default=51, help="in-process interleaved repeats (default 51)")
    parser.add_argument("--output", default="stub_cost", help="results file stem under bench/results/")
    args = parser.parse_args(argv)
    if not require_wrk():
        return 2
    quiet = wait_quiet(args.quiet_wait)
    inside = in_process(args.calls, args.repeats)
    with tempfile.TemporaryDirectory() as scratch:
        results = measure_all(args, Path(scratch))
    facts = {**machine(), "quiet": quiet, "settings": wrk_settings(args, calls=args.calls, repeats=args.repeats)}
    text = verdict_table(inside, results) + "\n" + table(results, args.rounds)
    print(text)
    write_json(f"{args.output}.json", {"machine": facts, "in_process": inside, "results": results})
    write_table(f"{args.output}.md", "Stub cost: the mock with stubs that match nothing vs without", text, facts)
    return 0


if __name__ == "__main__":
    sys.exit(main())
