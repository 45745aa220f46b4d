"""Mock throughput and latency under wrk, side by side with a bare aiohttp ceiling and Stoplight Prism.

    python bench/mock_throughput.py                # full run: 3 rounds of 10 s per measurement, -t2 -c50
    python bench/mock_throughput.py --duration 2 --warmup 1 --rounds 1   # a quick look
    python bench/mock_throughput.py --profile      # also record py-spy profiles of mock and bare
    python bench/mock_throughput.py --paired       # the verdict on a busy machine: CPU per request, A/B
    python bench/mock_throughput.py --paired --loops asyncio,uvloop   # both loops in the same rounds

--paired is the judgement that holds on a shared machine. For each operation one bare and one mock
server stay up, and wrk loads them in alternation (bare, mock, mock, bare, bare, mock, ...: each
round swaps who goes first), several short rounds each. A server's CPU time per request comes from
the kernel's nanosecond run-time accounting of its threads (/proc/PID/task/*/schedstat), over the
requests wrk completed; each round's bare / mock ratio compares two measurements seconds apart, so
a neighbour's load inflates both alike. It reports the median ratio over rounds with the spread,
beside the requests/s of the same runs. Bare and mock run on the same event loop (``--loops``:
the default one, uvloop when installed; ``asyncio,uvloop`` puts a bare and a mock of each loop in
the same rounds, and also reports each server's uvloop / asyncio ratios). Writes
bench/results/mock_throughput_paired.{json,md}.

Each round starts fresh servers, each a subprocess on a free 127.0.0.1 port pinned to CPU 0, and
loads them one after another (order rotated per round) with wrk pinned to CPU 1 (a 2-core
machine: the server gets one core, the load generator the other); the median round is kept:
  bare   bench/bare_server.py: plain aiohttp handlers returning similar bodies (the ceiling)
  mock   python -m mockserver: every request validated against the protocol document
  prism  prism mock specs/agent-protocol/openapi.json (Agent Protocol operations only)
Writes bench/results/mock_throughput.{json,md} and the raw wrk output mock_throughput.wrk.txt.
"""

from __future__ import annotations

import argparse
import contextlib
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from _common import (
    BENCH,
    CLIENT_CPU,
    PYTHON,
    RESULTS,
    ROOT,
    SCENARIOS,
    SERVER_CPU,
    STORED_TASKS,
    TASK_BODY,
    LoadMeter,
    Scenario,
    Server,
    free_port,
    http,
    lua_script,
    machine,
    measure,
    median_run,
    mock_command,
    pinned,
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

from specs.serving import LOOPS, default_loop

PRISM = BENCH / ".prism" / "node_modules" / ".bin" / "prism"
AP_DOCUMENT = ROOT / "specs" / "agent-protocol" / "openapi.json"

BARE_TARGETS = {"read": 0.90, "write": 0.85, "neuro-san stream": 0.85, "sgr stream": 0.85}
"""The mock's share of the bare ceiling each operation should reach (issue: toward the ceiling)."""
PRISM_TARGET = 5.0  # mock >= 5x Prism's requests/s on the same operations


def start_command(name: str, port: int, loop: str) -> list[str]:
    """The command of a server (bare and mock on ``loop``; Prism has its own runtime)."""
    if name == "bare":
        return [PYTHON, str(BENCH / "bare_server.py"), "--host", "127.0.0.1", "--port", str(port), "--loop", loop]
    if name == "mock":
        return mock_command(port, "--loop", loop)
    return [str(PRISM), "mock", "-h", "127.0.0.1", "-p", str(port), "-v", "error", str(AP_DOCUMENT)]


@contextlib.contextmanager
def start(name: str, scripts: Path, loop: str) -> Iterator[Server]:
    port = free_port()
    log = scripts / f"{name}-{loop}.log"
    with server(name, start_command(name, port, loop), port, SERVER_CPU, log) as srv:
        yield srv


def seed(srv: Server, kind: str | None = None) -> None:
    """A few stored tasks, so the read lists real ones (bare and Prism answer fixed bodies)."""
    if (kind or srv.name) in ("mock", "before"):
        for _ in range(STORED_TASKS):
            status, _ = http("POST", srv.url + "/ap/v1/agent/tasks", TASK_BODY)
            if status != 200:
                raise RuntimeError(f"seeding the mock failed with {status}")


# --- profiles ----------------------------------------------------------------------------------


CATEGORIES = (
    ("/mockserver/validation.py", "mock: request validation (mockserver/validation.py, jsonschema-rs)"),
    ("/mockserver/api.py", "mock: operation wrapper and Reply (mockserver/api.py)"),
    ("/mockserver/app.py", "mock: error middleware (mockserver/app.py)"),
    ("/mockserver/streaming.py", "mock: stream writers and gate (mockserver/streaming.py)"),
    ("/mockserver/protocols/", "mock: handlers and store (mockserver/protocols/)"),
    ("/bare_server.py", "bare: handlers (bench/bare_server.py)"),
    ("/json/", "json encode/decode (stdlib)"),
    ("/uuid.py", "uuid4 (stdlib)"),
    ("/aiohttp/", "aiohttp: HTTP parsing, routing, responses"),
    ("/asyncio/", "asyncio: event loop, transports"),
    ("/selectors.py", "asyncio: event loop, transports"),
    ("/socket.py", "asyncio: event loop, transports"),
)


def summarize_profile(raw: Path, top: int = 25) -> str:
    """Own-time shares per category and per function, and inclusive shares, from py-spy's raw stacks.

    A coroutine resumed by the event loop may be sampled without the loop's frames below it, so
    inclusive shares of event-loop frames under-count; own time (the sampled leaf) is exact.
    """
    own: dict[str, int] = defaultdict(int)
    category: dict[str, int] = defaultdict(int)
    inclusive: dict[str, int] = defaultdict(int)
    total = 0
    for line in raw.read_text().splitlines():
        stack, _, count_text = line.rpartition(" ")
        if not stack or not count_text.isdigit():
            continue
        count = int(count_text)
        frames = [f for f in stack.split(";") if not f.startswith(("process ", "thread "))]
        if not frames:
            continue
        total += count
        leaf = frames[-1]
        own[_frame(leaf)] += count
        category[_category(leaf)] += count
        for frame in {_frame(f) for f in frames}:
            inclusive[frame] += count
    if not total:
        return "no samples\n"

    def share(items: dict[str, int], limit: int) -> list[str]:
        return [f"{100 * n / total:6.1f}%  {name}" for name, n in sorted(items.items(), key=lambda kv: -kv[1])[:limit]]

    lines = [
        f"{total} samples of the busy server",
        "",
        "own time by category:",
        *share(category, 20),
        "",
        f"top {top} functions by own time:",
        *share(own, top),
        "",
        f"top {top} functions by inclusive time (coroutine frames; see above):",
        *share(
            {k: v for k, v in inclusive.items() if "asyncio/" not in k and "runpy" not in k and "__main__" not in k},
            top,
        ),
    ]
    return "\n".join(lines) + "\n"


def _category(frame: str) -> str:
    where = "/" + frame.partition(" (")[2]  # py-spy shows paths relative to sys.path entries
    for needle, name in CATEGORIES:
        if needle in where:
            return name
    return "other"


def _frame(frame: str) -> str:
    """``func (path/to/file.py:123)`` -> ``func (to/file.py)``: lines merged, paths shortened."""
    name, _, where = frame.partition(" (")
    where = where.rstrip(")").rsplit(":", 1)[0]
    parts = where.split("/")
    short = "/".join(parts[-2:]) if len(parts) > 1 else where
    return f"{name} ({short})"


def profile(srv: Server, scenario: Scenario, args: argparse.Namespace, scripts: Path) -> Path | None:
    py_spy = shutil.which("py-spy") or str(Path(PYTHON).parent / "py-spy")
    if not Path(py_spy).exists():
        print("  py-spy not found: pip install py-spy (see bench/requirements.txt); no profile", flush=True)
        return None
    tag = f"{srv.name}-{scenario.name.replace(' ', '-')}"
    raw = scripts / f"profile-{tag}.txt"
    lua = scripts / f"{scenario.name.replace(' ', '_')}.lua"
    lua.write_text(lua_script(scenario))
    seconds = max(2, round(args.duration))
    spy = subprocess.Popen(
        [
            *pinned(CLIENT_CPU),
            py_spy,
            "record",
            "--pid",
            str(srv.pid),
            "--duration",
            str(seconds),
            "--rate",
            "250",
            "--format",
            "raw",
            "--output",
            str(raw),
            "--nonblocking",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        time.sleep(0.5)
        run_wrk(srv.url + scenario.path, lua, seconds, args.threads, args.connections)
        spy.wait(timeout=seconds + 30)
    finally:
        if spy.poll() is None:
            spy.kill()
            spy.wait()
    if not raw.exists():
        err = spy.stderr.read().decode() if spy.stderr else ""
        print(f"  py-spy recorded nothing: {err.strip()[:300]}", flush=True)
        return None
    keep = RESULTS / "tmp" / raw.name  # collapsed stacks for flamegraph tools; gitignored
    keep.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(raw, keep)
    out = RESULTS / f"profile-{tag}.txt"
    out.write_text(
        f"py-spy record --rate 250 --nonblocking, {seconds} s of wrk -t{args.threads} "
        f"-c{args.connections} on {srv.name} {scenario.method} {scenario.path}\n" + summarize_profile(raw)
    )
    print(f"  profile written to {out.relative_to(ROOT)}", flush=True)
    return out


# --- paired: CPU per request, bare and mock alternated ----------------------------------------------


def cpu_ns(pid: int) -> int:
    """Nanoseconds on a CPU over all of a process's threads (the scheduler's own accounting:
    finer than utime + stime, which this kernel counts in 10 ms ticks)."""
    total = 0
    for stat in Path(f"/proc/{pid}/task").glob("*/schedstat"):
        with contextlib.suppress(OSError, ValueError, IndexError):
            total += int(stat.read_text().split()[0])
    return total


def paired_run(srv: Server, scenario: Scenario, args: argparse.Namespace, lua: Path) -> dict[str, Any]:
    before = cpu_ns(srv.pid)
    with LoadMeter([srv.pid]) as load:
        stats, _ = run_wrk(srv.url + scenario.path, lua, args.duration, args.threads, args.connections)
    used = cpu_ns(srv.pid) - before
    errors = sum(v for k, v in stats.items() if k.startswith("errors_"))
    requests = max(1, stats["requests"])
    return {
        "requests": stats["requests"],
        "rps": round(stats["requests"] / (stats["duration_us"] / 1e6), 1),
        "cpu_us_per_request": round(used / 1000 / requests, 2),
        "server_cpu_share": round(used / 1000 / stats["duration_us"], 3),
        "p50_ms": round(stats["p50_us"] / 1000, 2),
        "p99_ms": round(stats["p99_us"] / 1000, 2),
        "errors": errors,
        "other_load_cores": load.other_cores,
    }


def before_command(checkout: Path, port: int, loop: str) -> list[str]:
    """``python -m mockserver`` from another checkout (its mockserver and specs imported first; a
    checkout whose mock has ``--loop``)."""
    boot = (
        f"import runpy, sys; sys.path.insert(0, {str(checkout)!r}); runpy.run_module('mockserver', run_name='__main__')"
    )
    return [PYTHON, "-c", boot, *mock_command(port, "--loop", loop)[3:]]


@contextlib.contextmanager
def start_paired(name: str, scripts: Path, before: Path | None) -> Iterator[Server]:
    """``name`` is ``server/loop``: bare, mock or before (the mock of ``--before``) on that loop."""
    kind, loop = name.split("/")
    if kind != "before" or before is None:
        with start(kind, scripts, loop) as srv:
            yield srv
        return
    port = free_port()
    with server(name, before_command(before, port, loop), port, SERVER_CPU, scripts / f"before-{loop}.log") as srv:
        yield srv


def paired(args: argparse.Namespace, scripts: Path) -> dict[str, Any]:
    """Per operation: a fresh bare and mock (and the mock of ``--before``) on each loop, then
    ``args.rounds`` rounds of one wrk run on each, the order rotated per round."""
    kinds = ["bare", "mock", *(["before"] if args.before else [])]
    names = [f"{kind}/{loop}" for loop in args.loops for kind in kinds]
    out: dict[str, Any] = {}
    for scenario in SCENARIOS:
        lua = scripts / f"{scenario.name.replace(' ', '_')}.lua"
        lua.write_text(lua_script(scenario))
        print(f"{scenario.name}:", flush=True)
        runs: dict[str, list[dict[str, Any]]] = {name: [] for name in names}
        with contextlib.ExitStack() as stack:
            servers = {name: stack.enter_context(start_paired(name, scripts, args.before)) for name in names}
            for srv in servers.values():
                seed(srv, srv.name.split("/")[0])
                sanity(srv, scenario)
                if args.warmup > 0:
                    run_wrk(srv.url + scenario.path, lua, args.warmup, args.threads, args.connections)
            for number in range(args.rounds):
                for name in rotated(names, number):
                    runs[name].append(paired_run(servers[name], scenario, args, lua))
                last = {name: runs[name][-1] for name in names}
                cpu = "  ".join(f"{name} {r['cpu_us_per_request']:7.1f}" for name, r in last.items())
                rps = "  ".join(f"{name} {r['rps']:7.0f}" for name, r in last.items())
                load = "/".join(f"{r['other_load_cores']:.2f}" for r in last.values())
                print(f"  round {number + 1}: CPU µs/req {cpu}   req/s {rps}   other load {load} cores", flush=True)
        result: dict[str, Any] = {
            "runs": runs,
            "cpu_us_per_request": {name: _spread([r["cpu_us_per_request"] for r in rs]) for name, rs in runs.items()},
            "rps": {name: _spread([r["rps"] for r in rs]) for name, rs in runs.items()},
            "other_load_cores": _spread([r["other_load_cores"] for rs in runs.values() for r in rs]),
            "errors": sum(r["errors"] for rs in runs.values() for r in rs),
        }
        for loop in args.loops:  # each round's ratio: two runs seconds apart, so a neighbour hits both alike
            bare = runs[f"bare/{loop}"]
            shares: dict[str, Any] = result.setdefault("by_loop", {}).setdefault(loop, {})
            for kind in kinds[1:]:
                pairs = list(zip(bare, runs[f"{kind}/{loop}"], strict=True))
                suffix = "" if kind == "mock" else f"_{kind}"
                shares["cpu_share" + suffix] = _spread(
                    [b["cpu_us_per_request"] / m["cpu_us_per_request"] for b, m in pairs]
                )
                shares["rps_share" + suffix] = _spread([m["rps"] / b["rps"] for b, m in pairs])
        if {"asyncio", "uvloop"} <= set(args.loops):  # what uvloop gives each server, round by round
            result["uvloop_gain"] = {
                kind: {
                    "rps": _spread(
                        [
                            u["rps"] / a["rps"]
                            for a, u in zip(runs[f"{kind}/asyncio"], runs[f"{kind}/uvloop"], strict=True)
                        ]
                    ),
                    "cpu": _spread(
                        [
                            a["cpu_us_per_request"] / u["cpu_us_per_request"]
                            for a, u in zip(runs[f"{kind}/asyncio"], runs[f"{kind}/uvloop"], strict=True)
                        ]
                    ),
                }
                for kind in kinds
            }
        out[scenario.name] = result
    return out


def _spread(values: Sequence[float]) -> dict[str, float]:
    ordered = sorted(values)
    n = len(ordered)
    return {
        "median": round(statistics.median(ordered), 3),
        "min": round(ordered[0], 3),
        "max": round(ordered[-1], 3),
        "q1": round(ordered[(n - 1) // 4], 3),
        "q3": round(ordered[(3 * (n - 1) + 3) // 4], 3),
    }


def paired_table(results: dict[str, Any], rounds: int, loops: Sequence[str]) -> str:
    before = any("cpu_share_before" in shares for r in results.values() for shares in r["by_loop"].values())
    extra_head = " before CPU µs/req | bare / before CPU, per round: median (IQR) |" if before else ""
    rows = [
        "| operation | loop | bare CPU µs/req | mock CPU µs/req | bare / mock CPU, per round: median (IQR; range) | "
        f"target |{extra_head} bare req/s | mock req/s | mock / bare req/s, per round: median (range) | "
        "other load | errors |",
        "|---|---|---:|---:|---|---|" + ("---:|---|" if before else "") + "---:|---:|---|---:|---:|",
    ]
    for scenario in SCENARIOS:
        r = results.get(scenario.name)
        if r is None:
            continue
        for loop in loops:
            shares = r["by_loop"][loop]
            share, rps = shares["cpu_share"], shares["rps_share"]
            target = BARE_TARGETS[scenario.name]
            verdict = "**met**" if share["median"] >= target else "**missed**"
            load = r["other_load_cores"]
            cpu, got = r["cpu_us_per_request"], r["rps"]
            extra = ""
            if before:
                b = shares["cpu_share_before"]
                extra = f" {cpu[f'before/{loop}']['median']:.1f} | {b['median']:.0%} ({b['q1']:.0%}-{b['q3']:.0%}) |"
            rows.append(
                f"| {scenario.name} | {loop} | {cpu[f'bare/{loop}']['median']:.1f} | "
                f"{cpu[f'mock/{loop}']['median']:.1f} | {share['median']:.0%} "
                f"({share['q1']:.0%}-{share['q3']:.0%}; {share['min']:.0%}-{share['max']:.0%}) | "
                f">= {target:.0%}: {verdict} |{extra} {got[f'bare/{loop}']['median']:,.0f} | "
                f"{got[f'mock/{loop}']['median']:,.0f} | {rps['median']:.0%} ({rps['min']:.0%}-{rps['max']:.0%}) | "
                f"{load['median']:.2f} ({load['min']:.2f}-{load['max']:.2f}) cores | {r['errors']} |"
            )
    text = "\n".join(rows) + f"\n\n{rounds} rounds per operation; CPU µs/req and req/s are medians over rounds.\n"
    gains = [(name, r["uvloop_gain"]) for name, r in results.items() if "uvloop_gain" in r]
    if gains:
        lines = [
            "",
            "| operation | server | uvloop / asyncio req/s, per round: median (IQR; range) | asyncio / uvloop CPU "
            "µs/req, per round: median (IQR) |",
            "|---|---|---|---|",
        ]
        for name, gain in gains:
            for kind, g in gain.items():
                rps, cpu = g["rps"], g["cpu"]
                lines.append(
                    f"| {name} | {kind} | {rps['median']:.2f}x ({rps['q1']:.2f}-{rps['q3']:.2f}; "
                    f"{rps['min']:.2f}-{rps['max']:.2f}) | {cpu['median']:.2f}x ({cpu['q1']:.2f}-{cpu['q3']:.2f}) |"
                )
        text += "\n".join(lines) + "\n"
    return text


# --- report ----------------------------------------------------------------------------------


def ratio(a: float | None, b: float | None) -> float | None:
    return round(a / b, 2) if a is not None and b else None


def table(results: dict[str, dict[str, dict[str, Any]]]) -> str:
    rows = [
        "| operation | server | req/s (median) | rounds | p50 ms | p99 ms | bytes/resp | errors | server CPU | "
        "CPU µs/req | other load |",
        "|---|---|---:|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for scenario in SCENARIOS:
        for name in scenario.servers:
            r = results.get(scenario.name, {}).get(name)
            if r is None or "skipped" in r:
                reason = r["skipped"] if r else "not run"
                rows.append(f"| {scenario.name} | {name} | {reason} | | | | | | | | |")
                continue
            spread = ", ".join(f"{v:,.0f}" for v in r.get("rps_rounds", [r["rps"]]))
            rows.append(
                f"| {scenario.name} | {name} | {r['rps']:,.0f} | {spread} | {r['p50_ms']:.2f} | "
                f"{r['p99_ms']:.2f} | "
                f"{r['bytes_per_response']} | {r['errors']} | {r['server_cpu_percent']:.0f}% | "
                f"{r['server_cpu_us_per_request']:.0f} | {r['other_load_cores']:.2f} cores |"
            )
    rows += [
        "",
        "| operation | mock / bare req/s | bare / mock CPU µs per request | target (of bare) | "
        "mock / prism req/s | target |",
        "|---|---:|---:|---|---:|---|",
    ]
    for scenario in SCENARIOS:
        res = results.get(scenario.name, {})
        rps = {name: res[name]["rps"] for name in scenario.servers if name in res and "rps" in res[name]}
        cpu = {
            name: res[name]["server_cpu_us_per_request"]
            for name in scenario.servers
            if name in res and "rps" in res[name]
        }
        to_bare = ratio(rps.get("mock"), rps.get("bare"))
        cpu_share = ratio(cpu.get("bare"), cpu.get("mock"))
        to_prism = ratio(rps.get("mock"), rps.get("prism"))
        target = BARE_TARGETS.get(scenario.name)
        bare_verdict = "-" if target is None else _verdict(to_bare, target, f">= {target:.0%} req/s")
        prism_verdict = _verdict(to_prism, PRISM_TARGET, f">= {PRISM_TARGET:g}x") if scenario.targeted else "-"
        rows.append(
            f"| {scenario.name} | {_show(to_bare, '%')} | {_show(cpu_share, '%')} | {bare_verdict} | "
            f"{_show(to_prism, 'x')} | {prism_verdict} |"
        )
    return "\n".join(rows) + "\n"


def _show(value: float | None, unit: str) -> str:
    if value is None:
        return "n/a"
    return f"{value:.0%}" if unit == "%" else f"{value:.1f}x"


def _verdict(value: float | None, target: float, text: str) -> str:
    if value is None:
        return f"{text}: not measured"
    return f"{text}: **met**" if value >= target else f"{text}: **MISSED**"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--duration", type=float, help="seconds per measured wrk run (default 10; --paired 2)")
    parser.add_argument("--warmup", type=float, help="seconds of unmeasured wrk load first (default 3; --paired 1)")
    parser.add_argument("--rounds", type=int, help="rounds on fresh servers; the median is kept (3; --paired 9)")
    parser.add_argument("--threads", type=int, default=2, help="wrk threads (default 2)")
    parser.add_argument("--connections", type=int, default=50, help="wrk connections (default 50)")
    parser.add_argument("--servers", default="bare,mock,prism", help="comma-separated subset of bare,mock,prism")
    parser.add_argument("--profile", action="store_true", help="also record py-spy profiles of mock and bare")
    parser.add_argument(
        "--paired",
        action="store_true",
        help="bare and mock alternated on live servers, CPU µs/req per round (defaults: 9 rounds of 2 s, "
        "1 s warm-up; results under mock_throughput_paired)",
    )
    parser.add_argument(
        "--before",
        type=Path,
        help="with --paired: also load the mock of this other checkout (e.g. a git archive of the previous "
        "commit) in the same rounds, as 'before'",
    )
    parser.add_argument("--before-label", help="what --before is, for the results file (e.g. its commit)")
    parser.add_argument(
        "--loops",
        default=default_loop(),
        help=f"event loops bare and mock run on, comma-separated (default {default_loop()}: the mock's default); "
        "--paired loads each loop's servers in the same rounds; otherwise the first loop is used",
    )
    parser.add_argument("--output", help="results file stem under bench/results/ (default mock_throughput[_paired])")
    parser.add_argument(
        "--quiet-wait",
        type=float,
        help="wait up to this long for other processes to go idle first (default 180 s; --paired 0)",
    )
    args = parser.parse_args(argv)
    for name, default, paired_default in (
        ("duration", 10.0, 2.0),
        ("warmup", 3.0, 1.0),
        ("rounds", 3, 9),
        ("quiet_wait", 180.0, 0.0),
    ):
        if getattr(args, name) is None:
            setattr(args, name, paired_default if args.paired else default)
    if args.output is None:
        args.output = "mock_throughput_paired" if args.paired else "mock_throughput"
    args.loops = [loop.strip() for loop in args.loops.split(",") if loop.strip()]
    if not args.loops or any(loop not in LOOPS for loop in args.loops):
        parser.error(f"--loops: a comma-separated subset of {', '.join(LOOPS)}")
    if args.duration > 120 or args.warmup > 60 or not 1 <= args.rounds <= 31:
        parser.error("keep runs bounded: --duration <= 120, --warmup <= 60, 1 <= --rounds <= 31")

    if not require_wrk():
        return 2
    if args.paired:
        return main_paired(args)
    wanted = [s.strip() for s in args.servers.split(",") if s.strip()]
    results: dict[str, dict[str, dict[str, Any]]] = defaultdict(dict)
    if "prism" in wanted and not PRISM.exists():
        print(
            "Prism is not installed: npm install --prefix bench/.prism @stoplight/prism-cli; skipping it",
            file=sys.stderr,
        )
        wanted.remove("prism")
        for scenario in SCENARIOS:
            if "prism" in scenario.servers:
                results[scenario.name]["prism"] = {"skipped": "Prism not installed"}
    facts = machine()
    facts["before_start"] = wait_quiet(args.quiet_wait)
    facts["wrk"] = (
        subprocess.run(["wrk", "--version"], capture_output=True, text=True, check=False).stdout.split("\n")[0].strip()
        or "wrk"
    )
    facts["prism"] = (
        subprocess.run([str(PRISM), "--version"], capture_output=True, text=True, check=False).stdout.strip()
        if PRISM.exists()
        else "not installed"
    )
    settings = wrk_settings(
        args,
        server_cpu=SERVER_CPU,
        client_cpu=CLIENT_CPU,
        stored_tasks=STORED_TASKS,
        prism_flags="-v error (logging off)",
        loop=args.loops[0],
    )
    print(
        f"wrk -t{args.threads} -c{args.connections} -d{args.duration:g}s --latency "
        f"(warm-up {args.warmup:g} s); server pinned to CPU {SERVER_CPU}, wrk to CPU {CLIENT_CPU}",
        flush=True,
    )
    raw: list[str] = []
    profiles: list[str] = []
    rounds: dict[str, dict[str, list[dict[str, Any]]]] = defaultdict(lambda: defaultdict(list))
    with tempfile.TemporaryDirectory(prefix="bench-wrk-") as tmp:
        scripts = Path(tmp)
        for number in range(args.rounds):
            # Fresh servers each round, all up at once; each scenario measured on each server in turn
            # (order rotated per round), so neighbours' load hits every server alike.
            order = rotated(wanted, number)
            print(f"round {number + 1}/{args.rounds}", flush=True)
            with contextlib.ExitStack() as stack:
                servers = {name: stack.enter_context(start(name, scripts, args.loops[0])) for name in order}
                for srv in servers.values():
                    seed(srv)
                for scenario in SCENARIOS:
                    for name in order:
                        if name in scenario.servers:
                            rounds[scenario.name][name].append(measure(servers[name], scenario, args, scripts, raw))
        for scenario_name, by_server in rounds.items():
            for name, runs in by_server.items():
                results[scenario_name][name] = median_run(runs)
        if args.profile:
            for name in ("mock", "bare"):
                if name not in wanted:
                    continue
                with start(name, scripts, args.loops[0]) as srv:
                    seed(srv)
                    for scenario in SCENARIOS:
                        if name in scenario.servers:
                            out = profile(srv, scenario, args, scripts)
                            if out is not None:
                                profiles.append(str(out.relative_to(ROOT)))
    text = table(results)
    print("\n" + text)
    write_json(
        f"{args.output}.json", {"machine": facts, "settings": settings, "results": results, "profiles": profiles}
    )
    write_table(
        f"{args.output}.md",
        "Mock throughput",
        f"wrk -t{args.threads} -c{args.connections} -d{args.duration:g}s --latency after {args.warmup:g} s "
        f"of warm-up; median of {args.rounds} rounds; {facts['pinning']}.\n\n" + text,
        facts,
    )
    (RESULTS / f"{args.output}.wrk.txt").write_text("\n".join(raw))
    return 0


def main_paired(args: argparse.Namespace) -> int:
    facts = machine()
    facts["before_start"] = wait_quiet(args.quiet_wait) if args.quiet_wait > 0 else {"quiet": None}
    settings = wrk_settings(
        args,
        server_cpu=SERVER_CPU,
        client_cpu=CLIENT_CPU,
        stored_tasks=STORED_TASKS,
        cpu_source="/proc/PID/task/*/schedstat (ns on CPU)",
        before=(args.before_label or "another checkout") if args.before else None,
        loops=args.loops,
    )
    print(
        f"paired: {args.rounds} rounds of wrk -t{args.threads} -c{args.connections} -d{args.duration:g}s on each of "
        f"bare and mock per operation, alternated; servers on CPU {SERVER_CPU}, wrk on CPU {CLIENT_CPU}",
        flush=True,
    )
    with tempfile.TemporaryDirectory(prefix="bench-wrk-") as tmp:
        results = paired(args, Path(tmp))
    text = paired_table(results, args.rounds, args.loops)
    print("\n" + text)
    write_json(f"{args.output}.json", {"machine": facts, "settings": settings, "results": results})
    write_table(
        f"{args.output}.md",
        "Mock throughput, paired: CPU per request against bare aiohttp",
        f"wrk -t{args.threads} -c{args.connections} -d{args.duration:g}s, bare and mock alternated, "
        f"{args.rounds} rounds per operation after {args.warmup:g} s of warm-up each; {facts['pinning']}.\n\n" + text,
        facts,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
