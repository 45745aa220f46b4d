"""What the client-developer hooks cost the mock's hot path, side by side in one run.

    python bench/hook_cost.py                      # 3 rounds of 5 s per measurement
    python bench/hook_cost.py --duration 2 --warmup 1 --rounds 1   # a quick look

Servers, each a subprocess pinned to CPU 0 and loaded in turn by wrk pinned to CPU 1 (order rotated
per round, all up at once so that a neighbour's load hits each alike; the median round is kept):
  unhooked  bench/unhooked_mock.py: the request path without the hooks and without CORS (baseline)
  idle      python -m mockserver: hooks built in, but no chaos rule, no journal, no access log;
            CORS on (the default), wrk sending no Origin
  journal   python -m mockserver --journal: a journal reader, every exchange recorded
The figures are ratios of idle (and journal) to unhooked: requests/s and server CPU µs per request.
Writes bench/results/hook_cost.{json,md}.
"""

from __future__ import annotations

import argparse
import contextlib
import shutil
import sys
import tempfile
from collections import defaultdict
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from _common import (
    BENCH,
    PYTHON,
    RESULTS,
    SERVER_CPU,
    Server,
    free_port,
    http,
    machine,
    mock_command,
    server,
    wait_quiet,
    write_json,
)
from mock_throughput import SCENARIOS, STORED_TASKS, TASK_BODY, measure

VARIANTS = ("unhooked", "idle", "journal")
MEASURED = tuple(s for s in SCENARIOS if s.name in ("read", "write"))


def command(name: str, port: int) -> list[str]:
    if name == "unhooked":
        return [PYTHON, str(BENCH / "unhooked_mock.py"), "--host", "127.0.0.1", "--port", str(port)]
    if name == "journal":
        return mock_command(port, "--journal")
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


def _ratio(a: float, b: float) -> float:
    return round(a / b, 3) if b else float("nan")


def table(results: dict[str, dict[str, dict[str, Any]]]) -> str:
    rows = ["| operation | server | req/s (median) | rounds | CPU µs/req | req/s vs unhooked | CPU/req vs unhooked "
            "| other load |", "|---|---|---:|---|---:|---:|---:|---:|"]
    for scenario, by_server in results.items():
        base = by_server["unhooked"]
        for name in VARIANTS:
            r = by_server[name]
            rounds = ", ".join(f"{v:,.0f}" for v in r["rps_rounds"])
            rows.append(f"| {scenario} | {name} | {r['rps']:,.0f} | {rounds} | {r['server_cpu_us_per_request']} | "
                        f"{_ratio(r['rps'], base['rps'])} | "
                        f"{_ratio(r['server_cpu_us_per_request'], base['server_cpu_us_per_request'])} | "
                        f"{r['other_load_cores']} cores |")
    return "\n".join(rows) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--duration", type=float, default=5.0, help="seconds per measured wrk run (default 5)")
    parser.add_argument("--warmup", type=float, default=2.0, help="seconds of unmeasured load first (default 2)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds on fresh servers; the median is kept (3)")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--connections", type=int, default=50)
    parser.add_argument("--output", default="hook_cost", help="results file stem under bench/results/")
    parser.add_argument("--quiet-wait", type=float, default=60.0,
                        help="wait up to this long for other processes to go idle first (default 60 s)")
    args = parser.parse_args(argv)
    if args.duration > 60 or args.warmup > 30 or not 1 <= args.rounds <= 9:
        parser.error("keep runs bounded: --duration <= 60, --warmup <= 30, 1 <= --rounds <= 9")
    if shutil.which("wrk") is None:
        print("wrk is not installed. On Debian/Ubuntu: apt-get update && apt-get install -y wrk", file=sys.stderr)
        return 2
    facts = machine()
    facts["before_start"] = wait_quiet(args.quiet_wait)
    runs: dict[str, dict[str, list[dict[str, Any]]]] = defaultdict(lambda: defaultdict(list))
    raw: list[str] = []
    with tempfile.TemporaryDirectory(prefix="bench-hooks-") as tmp:
        scripts = Path(tmp)
        for number in range(args.rounds):
            order = VARIANTS[number % len(VARIANTS):] + VARIANTS[:number % len(VARIANTS)]
            print(f"round {number + 1}/{args.rounds}: {', '.join(order)}", flush=True)
            with contextlib.ExitStack() as stack:
                servers = {name: stack.enter_context(start(name, scripts)) for name in order}
                for scenario in MEASURED:
                    for name in order:
                        runs[scenario.name][name].append(measure(servers[name], scenario, args, scripts, raw))
    results: dict[str, dict[str, dict[str, Any]]] = defaultdict(dict)
    for scenario_name, by_server in runs.items():
        for name, measured in by_server.items():
            median = sorted(measured, key=lambda r: r["rps"])[len(measured) // 2]
            results[scenario_name][name] = {**median, "rps_rounds": [r["rps"] for r in measured]}
    text = table(results)
    print("\n" + text)
    settings = {"rounds": args.rounds, "duration_s": args.duration, "warmup_s": args.warmup, "threads": args.threads,
                "connections": args.connections, "stored_tasks": STORED_TASKS}
    write_json(f"{args.output}.json", {"machine": facts, "settings": settings, "results": results})
    (RESULTS / f"{args.output}.md").write_text(
        f"# Hook cost ({facts['date']})\n\nwrk -t{args.threads} -c{args.connections} -d{args.duration:g}s after "
        f"{args.warmup:g} s of warm-up; median of {args.rounds} rounds; {facts['pinning']}.\n\n" + text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
