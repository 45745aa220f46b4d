"""The validation proxy's cost, side by side: direct traffic vs `conformance proxy` vs Prism's proxy.

    python bench/proxy.py                              # 3 rounds of 5 s per measurement, -t2 -c50
    python bench/proxy.py --duration 2 --warmup 1 --rounds 1   # a quick look

Each round starts a fresh mock (the upstream), `python -m conformance proxy --protocol
agent-protocol` in front of it and `prism proxy specs/agent-protocol/openapi.json` in front of it,
all pinned to CPU 0 (the upstream and whichever proxy is loaded share it, so a proxy's whole cost
shows), and loads each target in turn (order rotated per round) with wrk pinned to CPU 1:
  direct   wrk -> mock
  proxy    wrk -> conformance proxy -> mock (every exchange judged; reports written on exit)
  prism    wrk -> prism proxy -> mock (request and response validated against the document)
on a read (GET /ap/v1/agent/tasks) and a write (POST /ap/v1/agent/tasks); the median round is
kept. Then the added delay to a stream's first frame: sequential SGR chat streams from the same
mock, direct and through the proxy, timing the first `data:` event (Agent Protocol has no stream;
Prism cannot follow one). Writes bench/results/proxy.{json,md}.
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
    Server,
    free_port,
    http,
    machine,
    measure,
    median_run,
    mock_command,
    percentile,
    rotated,
    server,
    wait_quiet,
    write_json,
    write_table,
    wrk_settings,
)
from mock_throughput import AP_DOCUMENT, PRISM

TARGETS = ("direct", "proxy", "prism")
CHAT = {"model": "sgr_agent", "messages": [{"role": "user", "content": "Research Rust's history"}], "stream": True}


@contextlib.contextmanager
def upstream(scripts: Path) -> Iterator[Server]:
    port = free_port()
    with server(
        "mock",
        mock_command(port, "--protocol", "agent-protocol", "--protocol", "sgr-agent-core"),
        port,
        SERVER_CPU,
        scripts / "mock.log",
    ) as srv:
        yield srv


def proxy_command(protocol: str, mock: Server, port: int, report_dir: Path) -> list[str]:
    """``conformance proxy`` on ``port`` in front of the mock, quiet, its report in ``report_dir``."""
    listen = ["--host", HOST, "--port", str(port)]
    run = [PYTHON, "-m", "conformance", "proxy", "--protocol", protocol, "--upstream", mock.url]
    return [*run, *listen, "--report-dir", str(report_dir), "-q"]


@contextlib.contextmanager
def front(name: str, mock: Server, scripts: Path) -> Iterator[Server]:
    port = free_port()
    if name == "proxy":
        command = proxy_command("agent-protocol", mock, port, scripts / "proxy-report")
    else:
        command = [str(PRISM), "proxy", "-h", HOST, "-p", str(port), "-v", "error", str(AP_DOCUMENT), mock.url]
    with server(name, command, port, SERVER_CPU, scripts / f"{name}.log") as srv:
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


def stream_delay(scripts: Path, count: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    with upstream(scripts) as mock:
        port = free_port()
        command = proxy_command("sgr-agent-core", mock, port, scripts / "sgr-report")
        with server("proxy", command, port, SERVER_CPU, scripts / "sgr-proxy.log"):
            first_frame_ms(mock.port, "/v1/chat/completions", 3)  # warm both paths
            first_frame_ms(port, "/v1/chat/completions", 3)
            for name, target in (("direct", mock.port), ("proxy", port), ("direct again", mock.port)):
                times = first_frame_ms(target, "/v1/chat/completions", count)
                out[name] = {
                    "p50_ms": round(percentile(times, 50), 2),
                    "p99_ms": round(percentile(times, 99), 2),
                    "count": count,
                }
    out["added_p50_ms"] = round(out["proxy"]["p50_ms"] - out["direct"]["p50_ms"], 2)
    out["added_p99_ms"] = round(out["proxy"]["p99_ms"] - out["direct"]["p99_ms"], 2)
    return out


def _ratio(a: dict[str, Any], b: dict[str, Any]) -> str:
    return f"{a['rps'] / b['rps']:.2f}" if a.get("rps") and b.get("rps") else "-"


def _added(a: dict[str, Any], base: dict[str, Any], key: str) -> str:
    return f"{a[key] - base[key]:+.2f} ms" if a.get(key) is not None and base.get(key) is not None else "-"


def table(results: dict[str, dict[str, dict[str, Any]]], stream: dict[str, Any]) -> str:
    rows = [
        "| operation | target | req/s (median) | rounds | p50 ms | p99 ms | errors | CPU µs/req | other load |",
        "|---|---|---:|---|---:|---:|---:|---:|---:|",
    ]
    for scenario, by_target in results.items():
        for name in TARGETS:
            r = by_target.get(name)
            if r is None or "skipped" in r:
                rows.append(f"| {scenario} | {name} | {r['skipped'] if r else '-'} | | | | | | |")
                continue
            rounds = ", ".join(f"{x:,.0f}" for x in r["rps_rounds"])
            rows.append(
                f"| {scenario} | {name} | {r['rps']:,.0f} | {rounds} | {r['p50_ms']} | {r['p99_ms']} | "
                f"{r['errors']} | {r['server_cpu_us_per_request']} | {r['other_load_cores']:.2f} cores |"
            )
    rows += [
        "",
        "| operation | proxy / direct req/s | prism / direct req/s | proxy / prism req/s | "
        "added p50 (proxy, prism) | added p99 (proxy, prism) |",
        "|---|---:|---:|---:|---|---|",
    ]
    for scenario, by_target in results.items():
        direct, proxy, prism = (by_target.get(n, {}) for n in TARGETS)
        rows.append(
            f"| {scenario} | {_ratio(proxy, direct)} | {_ratio(prism, direct)} | {_ratio(proxy, prism)} | "
            f"{_added(proxy, direct, 'p50_ms')}, {_added(prism, direct, 'p50_ms')} | "
            f"{_added(proxy, direct, 'p99_ms')}, {_added(prism, direct, 'p99_ms')} |"
        )
    rows += ["", "| SGR stream, first `data:` event | p50 ms | p99 ms |", "|---|---:|---:|"]
    for name in ("direct", "proxy", "direct again"):
        rows.append(f"| {name} | {stream[name]['p50_ms']} | {stream[name]['p99_ms']} |")
    rows.append(f"| **added by the proxy** | {stream['added_p50_ms']:+.2f} | {stream['added_p99_ms']:+.2f} |")
    return "\n".join(rows) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--duration", type=float, default=5.0, help="seconds per measured wrk run (default 5)")
    parser.add_argument("--warmup", type=float, default=2.0, help="seconds of unmeasured load first (default 2)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds on fresh servers; the median is kept (3)")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--connections", type=int, default=50)
    parser.add_argument("--streams", type=int, default=40, help="sequential streams per first-frame figure (40)")
    parser.add_argument("--output", default="proxy", help="results file stem under bench/results/")
    parser.add_argument("--quiet-wait", type=float, default=60.0, help="wait up to this long for an idle machine")
    args = parser.parse_args(argv)
    if args.duration > 60 or args.warmup > 30 or not 1 <= args.rounds <= 9 or not 1 <= args.streams <= 500:
        parser.error("keep runs bounded: --duration <= 60, --warmup <= 30, 1 <= --rounds <= 9, --streams <= 500")
    wanted = [t for t in TARGETS if t != "prism" or PRISM.exists()]
    results: dict[str, dict[str, dict[str, Any]]] = defaultdict(dict)
    scenarios = [s for s in SCENARIOS if s.name in ("read", "write")]
    if "prism" not in wanted:
        print(
            "Prism is not installed: npm install --prefix bench/.prism @stoplight/prism-cli; skipping it",
            file=sys.stderr,
        )
        for s in scenarios:
            results[s.name]["prism"] = {"skipped": "Prism not installed"}
    facts = machine()
    facts["before_start"] = wait_quiet(args.quiet_wait)
    facts["prism"] = (
        subprocess.run([str(PRISM), "--version"], capture_output=True, text=True, check=False).stdout.strip()
        if PRISM.exists()
        else "not installed"
    )
    rounds: dict[str, dict[str, list[dict[str, Any]]]] = defaultdict(lambda: defaultdict(list))
    raw: list[str] = []
    with tempfile.TemporaryDirectory(prefix="bench-proxy-") as tmp:
        scripts = Path(tmp)
        for number in range(args.rounds):
            order = rotated(wanted, number)
            print(f"round {number + 1}/{args.rounds}", flush=True)
            with contextlib.ExitStack() as stack:
                mock = stack.enter_context(upstream(scripts))
                for _ in range(5):
                    http("POST", mock.url + "/ap/v1/agent/tasks", {"input": "stored"})
                targets = {
                    name: mock if name == "direct" else stack.enter_context(front(name, mock, scripts))
                    for name in order
                }
                for scenario in scenarios:
                    for name in order:
                        srv = targets[name]
                        shown = Server(name, srv.port, srv.process)
                        rounds[scenario.name][name].append(measure(shown, scenario, args, scripts, raw))
        for scenario_name, by_target in rounds.items():
            for name, runs in by_target.items():
                results[scenario_name][name] = median_run(runs)
        stream = stream_delay(scripts, args.streams)
    text = table(results, stream)
    print("\n" + text)
    settings = wrk_settings(args, server_cpu=SERVER_CPU, client_cpu=CLIENT_CPU, streams=args.streams)
    write_json(
        f"{args.output}.json", {"machine": facts, "settings": settings, "results": results, "first_frame": stream}
    )
    write_table(
        f"{args.output}.md",
        "Validation proxy",
        f"wrk -t{args.threads} -c{args.connections} -d{args.duration:g}s after {args.warmup:g} s of warm-up; "
        f"median of {args.rounds} rounds; upstream and proxy on CPU {SERVER_CPU}, wrk on CPU {CLIENT_CPU}."
        "\n\n" + text,
        facts,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
