"""What the client-developer hooks cost the mock's hot path, side by side in one run.

    python bench/hook_cost.py                      # 7 rounds of 3 s per measurement
    python bench/hook_cost.py --duration 2 --warmup 1 --rounds 1   # a quick look

Servers, each a subprocess pinned to CPU 0 and loaded in turn by wrk pinned to CPU 1 (order rotated
per round, all up at once so that a neighbour's load hits each alike; the median round is kept):
  unhooked  bench/unhooked_mock.py: the request path without the hooks and without CORS (baseline)
  idle      python -m mockserver: hooks built in, but no chaos rule, no journal, no access log;
            CORS on (the default), wrk sending no Origin
  idle-no-cors  the same with --no-cors: the hooks alone
  journal   python -m mockserver --journal: a journal reader, every exchange recorded
The figures are ratios of idle (and journal) to unhooked: requests/s and server CPU µs per request.

First, in process and robust to a busy machine: the same operation's endpoint, as the router holds
it, called directly on a prepared request with the hooks idle and without them, A/B interleaved
over many repeats (minimum and median µs per call). That isolates exactly what the hooks add to
the hot path; the wrk table shows the whole request path, where a loaded machine adds noise.
Writes bench/results/hook_cost.{json,md}.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from _common import (
    BENCH,
    PYTHON,
    ROOT,
    SCENARIOS,
    SERVER_CPU,
    STORED_TASKS,
    TASK_BODY,
    Server,
    free_port,
    http,
    machine,
    measure,
    median_run,
    mock_command,
    require_wrk,
    rotated,
    server,
    wait_quiet,
    write_json,
    write_table,
    wrk_settings,
)

VARIANTS = ("unhooked", "idle", "idle-no-cors", "journal")
IN_PROCESS = (("agent-protocol", "GET", "/ap/v1/agent/tasks"), ("sgr-agent-core", "GET", "/health"))
MEASURED = tuple(s for s in SCENARIOS if s.name in ("read", "write"))


def command(name: str, port: int) -> list[str]:
    if name == "unhooked":
        return [PYTHON, str(BENCH / "unhooked_mock.py"), "--host", "127.0.0.1", "--port", str(port)]
    if name == "journal":
        return mock_command(port, "--journal")
    if name == "idle-no-cors":
        return mock_command(port, "--no-cors")
    return mock_command(port)


@contextlib.contextmanager
def start(name: str, scripts: Path) -> Iterator[Server]:
    port = free_port()
    with server(name, command(name, port), port, SERVER_CPU, scripts / f"{name}.log") as srv:
        for _ in range(STORED_TASKS):
            status, _ = http("POST", srv.url + "/ap/v1/agent/tasks", TASK_BODY)
            if status != 200:
                raise RuntimeError(f"seeding {name} failed with {status}")
        yield srv


def _endpoints(protocol: str, method: str, path: str) -> dict[str, Any]:
    """The router's handler for one operation, in an app with the hooks idle and one without them."""
    if str(ROOT) not in sys.path[:1]:
        sys.path.insert(0, str(ROOT))  # this checkout's mockserver, not an installed one
    from mockserver import MockConfig, create_app, hooks

    found: dict[str, Any] = {}
    original = hooks.Hooks.wrap
    for name in ("unhooked", "idle"):
        if name == "unhooked":
            setattr(hooks.Hooks, "wrap", lambda self, p, o, serve, e, i=None: serve)  # noqa: B010
        try:
            app = create_app(MockConfig(protocols=(protocol,)))
        finally:
            setattr(hooks.Hooks, "wrap", original)  # noqa: B010
        for route in app.router.routes():
            if route.method == method and route.resource is not None and route.resource.canonical == path:
                found[name] = (app, route.handler)
    return found


def in_process(calls: int, repeats: int) -> dict[str, dict[str, Any]]:
    from aiohttp.test_utils import make_mocked_request

    async def run(protocol: str, method: str, path: str) -> dict[str, Any]:
        endpoints = _endpoints(protocol, method, path)
        samples: dict[str, list[float]] = {name: [] for name in endpoints}
        for name, (app, handler) in endpoints.items():  # warm up, and check they answer alike
            for _ in range(calls):
                response = await handler(make_mocked_request(method, path, app=app))
            if response.status != 200:
                raise RuntimeError(f"{name} {method} {path} answered {response.status}")
        for number in range(repeats):
            order = sorted(endpoints, reverse=bool(number % 2))  # A/B, then B/A
            for name in order:
                app, handler = endpoints[name]
                request = make_mocked_request(method, path, app=app)
                started = time.perf_counter_ns()
                for _ in range(calls):
                    await handler(request)
                samples[name].append((time.perf_counter_ns() - started) / calls / 1000)
        out: dict[str, Any] = {
            name: {"min_us": round(min(v), 3), "median_us": round(statistics.median(v), 3)}
            for name, v in samples.items()
        }
        out["ratio_min"] = _ratio(out["idle"]["min_us"], out["unhooked"]["min_us"])
        # each repeat measures both back to back: their ratio cancels the machine's slower drifts
        paired = sorted(i / u for i, u in zip(samples["idle"], samples["unhooked"], strict=True))
        out["ratio_paired_median"] = round(statistics.median(paired), 3)
        out["ratio_paired_iqr"] = [round(paired[len(paired) // 4], 3), round(paired[3 * len(paired) // 4], 3)]
        return out

    return {f"{case[1]} {case[2]}": asyncio.run(run(*case)) for case in IN_PROCESS}


def hook_alone(calls: int = 100_000, repeats: int = 15) -> dict[str, float]:
    """µs the idle hook adds per request by itself: a wrapped no-op endpoint against the no-op,
    and the same hook with CORS on, for a request without ``Origin`` (every non-browser client)."""
    if str(ROOT) not in sys.path[:1]:
        sys.path.insert(0, str(ROOT))
    from aiohttp import web
    from aiohttp.test_utils import make_mocked_request

    from mockserver.chaos import Chaos
    from mockserver.hooks import Hooks
    from mockserver.journal import Journal

    answer = web.Response()

    async def noop(request: Any) -> web.StreamResponse:
        return answer

    endpoints = {
        "bare": noop,
        "hooked": Hooks(Chaos(), Journal()).wrap("agent-protocol", "listAgentTasks", noop, lambda error: answer),
        "hooked_cors": Hooks(Chaos(), Journal(), browsers=True).wrap(
            "agent-protocol", "listAgentTasks", noop, lambda error: answer
        ),
    }
    request = make_mocked_request("GET", "/health")

    async def run() -> dict[str, float]:
        best = {name: float("inf") for name in endpoints}
        for _ in range(repeats):
            for name, endpoint in endpoints.items():
                started = time.perf_counter_ns()
                for _ in range(calls):
                    await endpoint(request)
                best[name] = min(best[name], (time.perf_counter_ns() - started) / calls / 1000)
        return {
            "bare_us": round(best["bare"], 4),
            "hooked_us": round(best["hooked"], 4),
            "added_us": round(best["hooked"] - best["bare"], 4),
            "cors_added_us": round(best["hooked_cors"] - best["hooked"], 4),
        }

    return asyncio.run(run())


def in_process_table(results: dict[str, dict[str, Any]], alone: dict[str, float], calls: int, repeats: int) -> str:
    rows = [
        f"The idle hook by itself (best of 15 x 100,000 calls of a no-op endpoint): {alone['bare_us']} µs "
        f"bare, {alone['hooked_us']} µs wrapped: **{alone['added_us']} µs added per request**. CORS on, "
        f"for a request without Origin (the wrapper's header lookup): **{alone['cors_added_us']} µs** "
        "per answer.\n",
        f"In process: µs per endpoint call ({repeats} interleaved repeats of {calls} calls)\n",
        "| operation | unhooked min | idle min | idle/unhooked (min) | unhooked median | idle median "
        "| idle/unhooked, paired (median, IQR) |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for op, r in results.items():
        low, high = r["ratio_paired_iqr"]
        rows.append(
            f"| {op} | {r['unhooked']['min_us']} | {r['idle']['min_us']} | {r['ratio_min']} | "
            f"{r['unhooked']['median_us']} | {r['idle']['median_us']} | "
            f"{r['ratio_paired_median']} ({low}-{high}) |"
        )
    return "\n".join(rows) + "\n"


def _ratio(a: float, b: float) -> float:
    return round(a / b, 3) if b else float("nan")


def table(results: dict[str, dict[str, dict[str, Any]]]) -> str:
    rows = [
        "| operation | server | req/s (median) | rounds | CPU µs/req | req/s vs unhooked, paired by round "
        "(median) | CPU µs/req vs unhooked, paired (median) | other load |",
        "|---|---|---:|---|---:|---:|---:|---:|",
    ]
    for scenario, by_server in results.items():
        base = by_server["unhooked"]
        for name in VARIANTS:
            r = by_server[name]
            rounds = ", ".join(f"{v:,.0f}" for v in r["rps_rounds"])
            paired = statistics.median(_ratio(a, b) for a, b in zip(r["rps_rounds"], base["rps_rounds"], strict=True))
            cpu = statistics.median(_ratio(a, b) for a, b in zip(r["cpu_rounds"], base["cpu_rounds"], strict=True))
            rows.append(
                f"| {scenario} | {name} | {r['rps']:,.0f} | {rounds} | {r['server_cpu_us_per_request']} | "
                f"{paired:.3f} | {cpu:.3f} | {r['other_load_cores']} cores |"
            )
    return "\n".join(rows) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--duration", type=float, default=3.0, help="seconds per measured wrk run (default 3)")
    parser.add_argument("--warmup", type=float, default=1.0, help="seconds of unmeasured load first (default 1)")
    parser.add_argument("--rounds", type=int, default=7, help="rounds on fresh servers; the median is kept (7)")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--connections", type=int, default=50)
    parser.add_argument("--calls", type=int, default=200, help="in-process calls per repeat (default 200)")
    parser.add_argument("--repeats", type=int, default=101, help="in-process interleaved repeats (default 101)")
    parser.add_argument("--output", default="hook_cost", help="results file stem under bench/results/")
    parser.add_argument(
        "--quiet-wait",
        type=float,
        default=60.0,
        help="wait up to this long for other processes to go idle first (default 60 s)",
    )
    args = parser.parse_args(argv)
    if args.duration > 60 or args.warmup > 30 or not 1 <= args.rounds <= 9:
        parser.error("keep runs bounded: --duration <= 60, --warmup <= 30, 1 <= --rounds <= 9")
    if args.calls > 100_000 or not 1 <= args.repeats <= 101:
        parser.error("keep runs bounded: --calls <= 100000, 1 <= --repeats <= 101")
    if not require_wrk():
        return 2
    facts = machine()
    facts["before_start"] = wait_quiet(args.quiet_wait)
    alone = hook_alone()
    direct = in_process(args.calls, args.repeats)
    direct_text = in_process_table(direct, alone, args.calls, args.repeats)
    print(direct_text, flush=True)
    runs: dict[str, dict[str, list[dict[str, Any]]]] = defaultdict(lambda: defaultdict(list))
    raw: list[str] = []
    with tempfile.TemporaryDirectory(prefix="bench-hooks-") as tmp:
        scripts = Path(tmp)
        for number in range(args.rounds):
            order = rotated(VARIANTS, number)
            print(f"round {number + 1}/{args.rounds}: {', '.join(order)}", flush=True)
            with contextlib.ExitStack() as stack:
                servers = {name: stack.enter_context(start(name, scripts)) for name in order}
                for scenario in MEASURED:
                    for name in order:
                        runs[scenario.name][name].append(measure(servers[name], scenario, args, scripts, raw))
    results: dict[str, dict[str, dict[str, Any]]] = defaultdict(dict)
    for scenario_name, by_server in runs.items():
        for name, measured in by_server.items():
            results[scenario_name][name] = median_run(measured)
    text = table(results)
    print("\n" + text)
    text = direct_text + "\nThrough wrk, the whole request path:\n\n" + text
    settings = wrk_settings(args, stored_tasks=STORED_TASKS)
    settings.update(calls=args.calls, repeats=args.repeats)
    write_json(
        f"{args.output}.json",
        {"machine": facts, "settings": settings, "hook_alone": alone, "in_process": direct, "results": results},
    )
    write_table(
        f"{args.output}.md",
        "Hook cost",
        f"wrk -t{args.threads} -c{args.connections} -d{args.duration:g}s after {args.warmup:g} s of warm-up; "
        f"median of {args.rounds} rounds; {facts['pinning']}.\n\n" + text,
        facts,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
