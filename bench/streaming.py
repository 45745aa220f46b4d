"""Streaming: time to first frame and frames per second, client side, for NeuroSan and SGR streams.

    python bench/streaming.py                       # full run
    python bench/streaming.py --streams 50          # a quick look

The mock (``python -m mockserver``) runs as a subprocess on a free 127.0.0.1 port pinned to CPU 0;
the client (aiohttp, this process) on CPU 1 opens many streams and times each one:
  time to first frame  from sending the request to the first complete frame (an NDJSON line, an
                       SSE ``data:`` event)
  stream time          from sending the request to the last frame (SGR: ``data: [DONE]``)
  frames/s             all frames received / wall time (aggregate), and within one stream
                       (frames after the first / time between first and last frame)
Configurations: one stream at a time; 16 at a time; and one at a time with the mock's
``--stream-delay 0.02`` (frames 20 ms apart), which shows frames are flushed as they are produced:
the first frame does not wait for the rest. Writes bench/results/streaming.{json,md}.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import aiohttp
from _common import (
    CLIENT_CPU,
    RESULTS,
    SERVER_CPU,
    LoadMeter,
    free_port,
    machine,
    mock_command,
    percentile,
    pin_self,
    server,
    wait_quiet,
    write_json,
)


@dataclass(frozen=True, slots=True)
class Kind:
    name: str
    path: str
    body: dict[str, Any]
    sse: bool


KINDS = (
    Kind(
        "neuro-san streaming_chat (MAXIMAL)",
        "/api/v1/hello_world/streaming_chat",
        {
            "user_message": {"type": "HUMAN", "text": "Announce that the benchmark is running"},
            "chat_filter": {"chat_filter_type": "MAXIMAL"},
        },
        sse=False,
    ),
    Kind(
        "sgr chat completions",
        "/v1/chat/completions",
        {
            "model": "sgr_agent",
            "stream": True,
            "messages": [{"role": "user", "content": "Research the history of jazz music"}],
        },
        sse=True,
    ),
)


@dataclass(slots=True)
class Timing:
    first: float
    last: float
    frames: int


async def one_stream(session: aiohttp.ClientSession, kind: Kind, timeout: float) -> Timing:
    started = time.perf_counter()
    first = last = 0.0
    frames = 0
    async with session.post(kind.path, json=kind.body, timeout=aiohttp.ClientTimeout(total=timeout)) as response:
        if response.status != 200:
            raise RuntimeError(f"{kind.name}: status {response.status}: {(await response.read())[:200]!r}")
        while line := await response.content.readline():
            if kind.sse and not line.startswith(b"data:"):
                continue
            if not line.strip():
                continue
            now = time.perf_counter()
            frames += 1
            if frames == 1:
                first = now
            last = now
    if frames == 0:
        raise RuntimeError(f"{kind.name}: a stream with no frames")
    return Timing(first - started, last - started, frames)


async def run_config(url: str, kind: Kind, streams: int, concurrency: int, max_seconds: float) -> dict[str, Any]:
    timings: list[Timing] = []
    next_index = 0
    deadline = time.monotonic() + max_seconds
    connector = aiohttp.TCPConnector(limit=concurrency)
    async with aiohttp.ClientSession(url, connector=connector) as session:
        for _ in range(min(20, streams)):  # warm-up, unmeasured
            await one_stream(session, kind, 30)

        async def worker() -> None:
            nonlocal next_index
            while next_index < streams and time.monotonic() < deadline:
                next_index += 1
                timings.append(await one_stream(session, kind, 30))

        started = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        wall = time.perf_counter() - started
    firsts = [t.first * 1000 for t in timings]
    totals = [t.last * 1000 for t in timings]
    within = [(t.frames - 1) / (t.last - t.first) for t in timings if t.frames > 1 and t.last > t.first]
    frames = sum(t.frames for t in timings)
    return {
        "streams": len(timings),
        "concurrency": concurrency,
        "wall_s": round(wall, 2),
        "frames_per_stream": round(frames / len(timings), 1),
        "ttff_p50_ms": round(percentile(firsts, 50), 2),
        "ttff_p99_ms": round(percentile(firsts, 99), 2),
        "stream_p50_ms": round(percentile(totals, 50), 2),
        "stream_p99_ms": round(percentile(totals, 99), 2),
        "streams_per_s": round(len(timings) / wall, 1),
        "frames_per_s": round(frames / wall, 1),
        "within_stream_frames_per_s_median": round(statistics.median(within), 1) if within else None,
        "stopped_early": len(timings) < streams,
    }


def configs(streams: int) -> list[tuple[str, float, int, int]]:
    """(label, --stream-delay, streams, concurrency)."""
    return [
        ("1 at a time", 0.0, streams, 1),
        ("16 at a time", 0.0, streams, 16),
        ("1 at a time, frames 20 ms apart", 0.02, max(10, streams // 10), 1),
    ]


def _within(row: dict[str, Any]) -> str:
    if not row["stream_delay_s"]:
        return "burst"  # every frame is written at once: they arrive in one or two reads
    return f"{row['within_stream_frames_per_s_median']:,.0f}"


def table(results: list[dict[str, Any]]) -> str:
    lines = [
        "| stream | clients | streams | frames/stream | TTFF p50 ms | TTFF p99 ms | stream p50 ms | "
        "stream p99 ms | streams/s | frames/s | frames/s in a stream | other load |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        lines.append(
            f"| {r['kind']} | {r['config']} | {r['streams']} | {r['frames_per_stream']} | "
            f"{r['ttff_p50_ms']:.2f} | {r['ttff_p99_ms']:.2f} | {r['stream_p50_ms']:.2f} | "
            f"{r['stream_p99_ms']:.2f} | {r['streams_per_s']:,.0f} | {r['frames_per_s']:,.0f} | "
            f"{_within(r)} | {r['other_load_cores']:.2f} cores |"
        )
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--streams", type=int, default=2000, help="streams per configuration (default 2000)")
    parser.add_argument("--max-seconds", type=float, default=60.0, help="bound per configuration (default 60)")
    parser.add_argument("--quiet-wait", type=float, default=180.0, help="wait up to this long for an idle machine")
    parser.add_argument("--output", default="streaming", help="results file stem under bench/results/")
    args = parser.parse_args(argv)
    if not 1 <= args.streams <= 100_000:
        parser.error("--streams must be between 1 and 100,000")
    facts = machine()
    facts["before_start"] = wait_quiet(args.quiet_wait)
    pin_self(CLIENT_CPU)
    results: list[dict[str, Any]] = []
    for label, delay, streams, concurrency in configs(args.streams):
        port = free_port()
        with server("mock", mock_command(port, "--stream-delay", str(delay)), port, SERVER_CPU) as srv:
            for kind in KINDS:
                with LoadMeter([srv.pid]) as load:
                    row = asyncio.run(run_config(srv.url, kind, streams, concurrency, args.max_seconds))
                row.update(
                    {"kind": kind.name, "config": label, "stream_delay_s": delay, "other_load_cores": load.other_cores}
                )
                results.append(row)
                print(
                    f"  {kind.name:36} {label:32} TTFF p50 {row['ttff_p50_ms']:.2f} ms p99 "
                    f"{row['ttff_p99_ms']:.2f} ms  {row['frames_per_s']:,.0f} frames/s  "
                    f"({row['streams']} streams, other load {load.other_cores} cores)",
                    flush=True,
                )
    text = table(results)
    print("\n" + text)
    write_json(f"{args.output}.json", {"machine": facts, "settings": vars(args), "results": results})
    (RESULTS / f"{args.output}.md").write_text(f"# Streaming ({facts['date']})\n\n" + text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
