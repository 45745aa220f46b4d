"""The validation proxy's cost, side by side: direct traffic vs `conformance proxy` vs Prism's proxy.

    python bench/proxy.py                              # 3 rounds of 5 s per measurement, -t2 -c50
    python bench/proxy.py --duration 2 --warmup 1 --rounds 1   # a quick look
    python bench/proxy.py --loops asyncio              # one event loop only

Each round starts, per event loop (asyncio, and uvloop when installed), a fresh mock (the upstream)
and `python -m conformance proxy --protocol agent-protocol` in front of it on the same loop (and
`prism proxy specs/agent-protocol/openapi.json` in front of the first loop's mock), all pinned to
CPU 0 (the upstream and whichever proxy is loaded share it, so a proxy's whole cost shows), and
loads each target in turn (order rotated per round) with wrk pinned to CPU 1:
  direct   wrk -> mock
  proxy    wrk -> conformance proxy -> mock (every exchange judged; reports written on exit)
  prism    wrk -> prism proxy -> mock (request and response validated against the document)
on a read (GET /ap/v1/agent/tasks) and a write (POST /ap/v1/agent/tasks). The proxy's share of
direct traffic is given two ways: the median over rounds of each round's req/s ratio, and by CPU
per request (the mock's direct, over the mock's behind the proxy plus the proxy's own), which is
what the req/s ratio is on an otherwise idle core and what a neighbour on a shared machine
disturbs least. Then the added delay to a stream's first frame: sequential SGR chat streams from
the same mock, direct and through the proxy alternated in blocks, timing the first `data:` event
(Agent Protocol has no stream; Prism cannot follow one). Writes bench/results/proxy.{json,md}.
"""

from __future__ import annotations

import argparse
import contextlib
import http.client as httpclient
import json
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from _common import (
    CLIENT_CPU,
    HOST,
    PYTHON,
    SCENARIOS,
    SERVER_CPU,
    STORED_TASKS,
    Server,
    free_port,
    http,
    machine,
    measure,
    median,
    median_run,
    mock_command,
    percentile,
    rotated,
    server,
    version,
    wait_quiet,
    write_json,
    write_table,
    wrk_settings,
)
from mock_throughput import AP_DOCUMENT, PRISM

LOOPS = ("asyncio", "uvloop")
CHAT = {"model": "sgr_agent", "messages": [{"role": "user", "content": "Research Rust's history"}], "stream": True}
PROXY_TARGET = 0.4
"""The proxy's share of direct requests/s on read and write (issue 29; Prism's is 0.05)."""
FIRST_FRAME_TARGET_MS = 1.0
"""Most the proxy may add to a stream's first frame at the median, on a quiet machine."""


def loops_available() -> list[str]:
    import importlib.util

    return [loop for loop in LOOPS if loop == "asyncio" or importlib.util.find_spec(loop) is not None]


@contextlib.contextmanager
def upstream(scripts: Path, loop: str) -> Iterator[Server]:
    port = free_port()
    with server(
        f"mock/{loop}",
        mock_command(port, "--protocol", "agent-protocol", "--protocol", "sgr-agent-core", "--loop", loop),
        port,
        SERVER_CPU,
        scripts / f"mock-{loop}.log",
    ) as srv:
        yield srv


def proxy_command(protocol: str, mock: Server, port: int, report_dir: Path, loop: str) -> list[str]:
    """``conformance proxy`` on ``port`` in front of the mock, quiet, its report in ``report_dir``."""
    listen = ["--host", HOST, "--port", str(port), "--loop", loop]
    run = [PYTHON, "-m", "conformance", "proxy", "--protocol", protocol, "--upstream", mock.url]
    return [*run, *listen, "--report-dir", str(report_dir), "-q"]


@contextlib.contextmanager
def front(name: str, mock: Server, scripts: Path, loop: str) -> Iterator[Server]:
    port = free_port()
    if name == "proxy":
        command = proxy_command("agent-protocol", mock, port, scripts / f"proxy-report-{loop}", loop)
    else:
        command = [str(PRISM), "proxy", "-h", HOST, "-p", str(port), "-v", "error", str(AP_DOCUMENT), mock.url]
    with server(f"{name}/{loop}", command, port, SERVER_CPU, scripts / f"{name}-{loop}.log") as srv:
        yield srv


def first_frame_ms(port: int, path: str, count: int) -> list[float]:
    """Milliseconds from sending a chat to its first complete `data:` event, ``count`` times in a row."""
    times = []
    body = json.dumps(CHAT).encode()
    for _ in range(count):
        conn = httpclient.HTTPConnection(HOST, port, timeout=10)
        try:
            started = time.perf_counter()
            conn.request("POST", path, body, {"Content-Type": "application/json"})
            answer = conn.getresponse()
            seen = b""
            while b"\n\n" not in seen:
                piece = answer.read1(65536)
                if not piece:
                    raise RuntimeError("the stream ended before its first event")
                seen += piece
            times.append((time.perf_counter() - started) * 1000)
            answer.read()  # drain: the next request starts on a finished stream
        finally:
            conn.close()
    return times


def stream_delay(scripts: Path, count: int, loop: str, rounds: int) -> dict[str, Any]:
    """Direct and proxied first frames alternated in ``rounds`` blocks, so drift hits both alike."""
    times: dict[str, list[float]] = {"direct": [], "proxy": []}
    with upstream(scripts, loop) as mock:
        port = free_port()
        command = proxy_command("sgr-agent-core", mock, port, scripts / f"sgr-report-{loop}", loop)
        with server("proxy", command, port, SERVER_CPU, scripts / f"sgr-proxy-{loop}.log"):
            first_frame_ms(mock.port, "/v1/chat/completions", 3)  # warm both paths
            first_frame_ms(port, "/v1/chat/completions", 3)
            per_block = max(1, count // rounds)
            for block in range(rounds):
                for name in rotated(["direct", "proxy"], block):
                    target = mock.port if name == "direct" else port
                    times[name] += first_frame_ms(target, "/v1/chat/completions", per_block)
    out: dict[str, Any] = {
        name: {"p50_ms": round(percentile(t, 50), 3), "p99_ms": round(percentile(t, 99), 3), "count": len(t)}
        for name, t in times.items()
    }
    out["added_p50_ms"] = round(out["proxy"]["p50_ms"] - out["direct"]["p50_ms"], 3)
    out["added_p99_ms"] = round(out["proxy"]["p99_ms"] - out["direct"]["p99_ms"], 3)
    return out


def cpu_ratio(direct: dict[str, Any], proxy: dict[str, Any]) -> float | None:
    """What the req/s ratio is when one core is the limit: the mock's CPU per request direct, over the
    mock's behind the proxy plus the proxy's own (neighbours on the machine inflate all alike)."""
    behind = proxy.get("upstream_cpu_us_per_request")
    if not behind or not direct.get("server_cpu_us_per_request"):
        return None
    return float(direct["server_cpu_us_per_request"]) / float(behind + proxy["server_cpu_us_per_request"])


def _fmt(value: float | None, digits: int = 2) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def table(results: dict[str, Any], streams: dict[str, dict[str, Any]], loops: list[str]) -> str:
    rows = [
        "| operation | loop | target | req/s (median) | rounds | p50 ms | p99 ms | errors | CPU µs/req "
        "| upstream CPU µs/req | other load |",
        "|---|---|---|---:|---|---:|---:|---:|---:|---:|---:|",
    ]
    for scenario, by_loop in results.items():
        for loop in loops:
            for name, r in by_loop.get(loop, {}).items():
                if name == "ratios":
                    continue
                if "skipped" in r:
                    rows.append(f"| {scenario} | {loop} | {name} | {r['skipped']} | | | | | | | |")
                    continue
                rounds = ", ".join(f"{x:,.0f}" for x in r["rps_rounds"])
                upstream_cpu = r.get("upstream_cpu_us_per_request", "-")
                rows.append(
                    f"| {scenario} | {loop} | {name} | {r['rps']:,.0f} | {rounds} | {r['p50_ms']} | {r['p99_ms']} | "
                    f"{r['errors']} | {r['server_cpu_us_per_request']} | {upstream_cpu} | "
                    f"{r['other_load_cores']:.2f} cores |"
                )
    rows += [
        "",
        "| operation | loop | proxy / direct req/s: median of rounds (rounds) | by CPU per request: median "
        f"(rounds) | target >= {PROXY_TARGET} | prism / direct req/s |",
        "|---|---|---|---|---|---:|",
    ]
    for scenario, by_loop in results.items():
        for loop in loops:
            ratios = by_loop.get(loop, {}).get("ratios")
            if not ratios:
                continue
            rps, cpu = ratios["rps"], ratios["cpu"]
            met = cpu["median"] is not None and cpu["median"] >= PROXY_TARGET
            prism = ratios.get("prism")
            rows.append(
                f"| {scenario} | {loop} | {_fmt(rps['median'])} ({', '.join(_fmt(x) for x in rps['rounds'])}) | "
                f"{_fmt(cpu['median'])} ({', '.join(_fmt(x) for x in cpu['rounds'])}) | "
                f"{'met' if met else '**missed**'} | {_fmt(prism)} |"
            )
    rows += [
        "",
        "| SGR stream, first `data:` event | loop | direct p50 ms | proxy p50 ms | added p50 | direct p99 ms "
        f"| proxy p99 ms | target: added p50 <= {FIRST_FRAME_TARGET_MS:g} ms |",
        "|---|---|---:|---:|---:|---:|---:|---|",
    ]
    for loop, s in streams.items():
        met = s["added_p50_ms"] <= FIRST_FRAME_TARGET_MS
        rows.append(
            f"| {s['direct']['count']} streams each | {loop} | {s['direct']['p50_ms']} | {s['proxy']['p50_ms']} | "
            f"{s['added_p50_ms']:+.3f} | {s['direct']['p99_ms']} | {s['proxy']['p99_ms']} | "
            f"{'met' if met else '**missed**'} |"
        )
    return "\n".join(rows) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--duration", type=float, default=5.0, help="seconds per measured wrk run (default 5)")
    parser.add_argument("--warmup", type=float, default=2.0, help="seconds of unmeasured load first (default 2)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds on fresh servers; the median is kept (3)")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--connections", type=int, default=50)
    parser.add_argument("--streams", type=int, default=200, help="sequential streams per first-frame figure (200)")
    parser.add_argument(
        "--loops", default=",".join(loops_available()), help="event loops to compare, side by side (default: all)"
    )
    parser.add_argument("--no-prism", action="store_true", help="leave Prism out even when installed")
    parser.add_argument("--output", default="proxy", help="results file stem under bench/results/")
    parser.add_argument("--quiet-wait", type=float, default=60.0, help="wait up to this long for an idle machine")
    args = parser.parse_args(argv)
    if args.duration > 60 or args.warmup > 30 or not 1 <= args.rounds <= 9 or not 1 <= args.streams <= 2000:
        parser.error("keep runs bounded: --duration <= 60, --warmup <= 30, 1 <= --rounds <= 9, --streams <= 2000")
    loops = [loop for loop in args.loops.split(",") if loop]
    if not loops or any(loop not in loops_available() for loop in loops):
        parser.error(f"--loops: choose from {', '.join(loops_available())} (uvloop: pip install uvloop)")
    with_prism = PRISM.exists() and not args.no_prism
    if not PRISM.exists() and not args.no_prism:
        print(
            "Prism is not installed: npm install --prefix bench/.prism @stoplight/prism-cli; skipping it",
            file=sys.stderr,
        )
    names = ["direct", "proxy"] + (["prism"] if with_prism else [])
    scenarios = [s for s in SCENARIOS if s.name in ("read", "write")]
    facts = machine()
    facts["before_start"] = wait_quiet(args.quiet_wait)
    facts["prism"] = (
        subprocess.run([str(PRISM), "--version"], capture_output=True, text=True, check=False).stdout.strip()
        if PRISM.exists()
        else "not installed"
    )
    facts["uvloop"] = version("uvloop")
    facts["httptools"] = version("httptools")
    rounds: dict[str, dict[str, dict[str, list[dict[str, Any]]]]] = defaultdict(
        lambda: defaultdict(lambda: defaultdict(list))
    )
    raw: list[str] = []
    with tempfile.TemporaryDirectory(prefix="bench-proxy-") as tmp:
        scripts = Path(tmp)
        for number in range(args.rounds):
            order = rotated([(loop, name) for loop in loops for name in names], number)
            print(f"round {number + 1}/{args.rounds}", flush=True)
            with contextlib.ExitStack() as stack:
                mocks = {loop: stack.enter_context(upstream(scripts, loop)) for loop in loops}
                for mock in mocks.values():
                    for _ in range(STORED_TASKS):
                        http("POST", mock.url + "/ap/v1/agent/tasks", {"input": "stored"})
                targets: dict[tuple[str, str], Server] = {}
                for loop, name in order:
                    if name == "direct":
                        targets[(loop, name)] = mocks[loop]
                    elif name != "prism" or loop == loops[0]:
                        targets[(loop, name)] = stack.enter_context(front(name, mocks[loop], scripts, loop))
                for scenario in scenarios:
                    for loop, name in order:
                        if (loop, name) not in targets:
                            continue
                        srv = targets[(loop, name)]
                        shown = Server(f"{name}/{loop}", srv.port, srv.process)
                        behind = mocks[loop] if name != "direct" else None
                        run = measure(shown, scenario, args, scripts, raw, behind=behind)
                        rounds[scenario.name][loop][name].append(run)
        streams = {loop: stream_delay(scripts, args.streams, loop, max(1, args.rounds)) for loop in loops}
    results: dict[str, Any] = {}
    for scenario_name, by_loop in rounds.items():
        results[scenario_name] = {}
        for loop, by_name in by_loop.items():
            kept: dict[str, Any] = {name: median_run(runs) for name, runs in by_name.items()}
            direct, proxied = by_name.get("direct", []), by_name.get("proxy", [])
            rps = [p["rps"] / d["rps"] for d, p in zip(direct, proxied, strict=True) if d["rps"]]
            cpu = [c for c in (cpu_ratio(d, p) for d, p in zip(direct, proxied, strict=True)) if c is not None]
            kept["ratios"] = {
                "rps": {"median": median(rps) if rps else None, "rounds": rps},
                "cpu": {"median": median(cpu) if cpu else None, "rounds": cpu},
            }
            if by_name.get("prism"):
                kept["ratios"]["prism"] = kept["prism"]["rps"] / kept["direct"]["rps"]
            results[scenario_name][loop] = kept
    text = table(results, streams, loops)
    print("\n" + text)
    settings = wrk_settings(args, server_cpu=SERVER_CPU, client_cpu=CLIENT_CPU, streams=args.streams, loops=loops)
    write_json(
        f"{args.output}.json", {"machine": facts, "settings": settings, "results": results, "first_frame": streams}
    )
    write_table(
        f"{args.output}.md",
        "Validation proxy",
        f"wrk -t{args.threads} -c{args.connections} -d{args.duration:g}s after {args.warmup:g} s of warm-up; "
        f"{args.rounds} rounds, each loop's direct and proxied targets side by side (order rotated); upstream "
        f"and proxy on CPU {SERVER_CPU}, wrk on CPU {CLIENT_CPU}.\n\n" + text,
        facts,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
