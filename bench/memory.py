"""Mock memory: resident size after 100,000 tasks and 10,000 artifacts of 10 KB, and the limits at work.

    python bench/memory.py                                   # full run
    python bench/memory.py --tasks 5000 --artifacts 500      # a quick look

Part 1: ``python -m mockserver --protocol agent-protocol`` as a subprocess on a free 127.0.0.1 port
(pinned to CPU 0); an aiohttp client (CPU 1, 32 connections) creates the tasks, then uploads the
artifacts (10 KB of random bytes each, spread over the first tasks); the server's VmRSS is read
from /proc/PID/status before and after each step. Bounded by --max-seconds per step.

Part 2: the configured limits exceeded, in process (``create_app`` with small ``MockLimits`` behind
aiohttp's TestServer on loopback): stored objects and stored bytes (507), JSON body size (413),
open streams (503 + Retry-After), each in its protocol's error shape, and the server answering
normally afterwards. Writes bench/results/memory.{json,md}.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import aiohttp
from _common import CLIENT_CPU, RESULTS, SERVER_CPU, free_port, machine, mock_command, pin_self, rss_kib, server
from _common import write_json as save
from aiohttp.test_utils import TestClient, TestServer

from mockserver import MockConfig, create_app
from mockserver.config import MockLimits

ARTIFACT_BYTES = 10 * 1024
TASKS_PER_ARTIFACT_GROUP = 10  # artifacts per task in part 1
CONCURRENCY = 32


async def bounded(count: int, max_seconds: float, make: Callable[[int], Awaitable[int]]) -> dict[str, Any]:
    """``count`` calls of ``make(i)`` over CONCURRENCY workers, stopping early after ``max_seconds``."""
    next_index = 0
    statuses: dict[int, int] = {}
    started = time.monotonic()
    deadline = started + max_seconds

    async def worker() -> None:
        nonlocal next_index
        while next_index < count and time.monotonic() < deadline:
            i = next_index
            next_index += 1
            status = await make(i)
            statuses[status] = statuses.get(status, 0) + 1

    await asyncio.gather(*(worker() for _ in range(CONCURRENCY)))
    seconds = time.monotonic() - started
    done = sum(statuses.values())
    return {
        "requested": count,
        "done": done,
        "statuses": {str(k): v for k, v in sorted(statuses.items())},
        "seconds": round(seconds, 1),
        "per_second": round(done / seconds, 1) if seconds else None,
        "stopped_early": done < count,
    }


async def fill(url: str, pid: int, tasks: int, artifacts: int, max_seconds: float) -> dict[str, Any]:
    out: dict[str, Any] = {}
    connector = aiohttp.TCPConnector(limit=CONCURRENCY)
    async with aiohttp.ClientSession(url, connector=connector) as session:
        for _ in range(50):  # warm the server's code paths and buffers before the baseline
            async with session.get("/ap/v1/agent/tasks") as response:
                await response.read()
        out["rss_kib_baseline"] = rss_kib(pid)
        task_ids: list[str] = []

        async def create(i: int) -> int:
            body = {
                "input": f"Write 'Washington' to the file 'output.txt'. Task {i}.",
                "additional_input": {"debug": False, "mode": "benchmarks", "n": i},
            }
            async with session.post("/ap/v1/agent/tasks", json=body) as response:
                data = await response.read()
                if response.status == 200 and len(task_ids) < artifacts:
                    task_ids.append(json.loads(data)["task_id"])
                return response.status

        out["tasks"] = await bounded(tasks, max_seconds, create)
        out["rss_kib_after_tasks"] = rss_kib(pid)
        print(f"  tasks: {out['tasks']}; RSS {out['rss_kib_after_tasks'] / 1024:.1f} MiB", flush=True)

        async def upload(i: int) -> int:
            if not task_ids:
                return 0
            task_id = task_ids[(i // TASKS_PER_ARTIFACT_GROUP) % len(task_ids)]
            form = aiohttp.FormData()
            form.add_field(
                "file", os.urandom(ARTIFACT_BYTES), filename=f"blob-{i}.bin", content_type="application/octet-stream"
            )
            async with session.post(f"/ap/v1/agent/tasks/{task_id}/artifacts", data=form) as response:
                await response.read()
                return response.status

        out["artifacts"] = await bounded(artifacts, max_seconds, upload)
        out["rss_kib_after_artifacts"] = rss_kib(pid)
        print(f"  artifacts: {out['artifacts']}; RSS {out['rss_kib_after_artifacts'] / 1024:.1f} MiB", flush=True)
        async with session.get("/ap/v1/agent/tasks", params={"page_size": "1"}) as response:
            out["stored_tasks_reported"] = (await response.json())["pagination"]["total_items"]
    stored_tasks = out["tasks"]["statuses"].get("200", 0)
    stored_artifacts = out["artifacts"]["statuses"].get("200", 0)
    task_bytes = (out["rss_kib_after_tasks"] - out["rss_kib_baseline"]) * 1024
    artifact_bytes = (out["rss_kib_after_artifacts"] - out["rss_kib_after_tasks"]) * 1024
    out["bytes_per_task"] = round(task_bytes / stored_tasks) if stored_tasks else None
    out["bytes_per_artifact"] = round(artifact_bytes / stored_artifacts) if stored_artifacts else None
    if out["bytes_per_artifact"] is not None:
        out["artifact_overhead_bytes"] = out["bytes_per_artifact"] - ARTIFACT_BYTES
    return out


# --- part 2: limits ----------------------------------------------------------------------------


def shown(body: bytes) -> Any:
    try:
        return json.loads(body)
    except ValueError:
        return body[:200].decode("utf-8", "replace")


async def exchange(client: TestClient[Any, Any], method: str, path: str, **kwargs: Any) -> dict[str, Any]:
    async with client.request(method, path, **kwargs) as response:
        body = await response.read()
        row: dict[str, Any] = {"request": f"{method} {path}", "status": response.status, "body": shown(body)}
        if "Retry-After" in response.headers:
            row["retry_after"] = response.headers["Retry-After"]
        return row


async def until_refused(call: Callable[[], Awaitable[dict[str, Any]]], limit: int) -> tuple[int, dict[str, Any]]:
    """Repeat ``call`` until it is refused (not 2xx), at most ``limit`` times."""
    for accepted in range(limit):
        row = await call()
        if not 200 <= row["status"] < 300:
            return accepted, row
    raise RuntimeError(f"no refusal within {limit} calls")


async def limits_demo() -> list[dict[str, Any]]:
    limits = MockLimits(max_json_bytes=4096, max_stored_objects=40, max_stored_bytes=64 * 1024, max_open_streams=2)
    config = MockConfig(limits=limits, stream_delay=0.2)
    steps: list[dict[str, Any]] = []
    async with TestClient(TestServer(create_app(config), host="127.0.0.1")) as client:
        # Agent Protocol: artifact bytes, then stored objects.
        created = await exchange(client, "POST", "/ap/v1/agent/tasks", json={"input": "hold artifacts"})
        task_id = created["body"]["task_id"]

        async def upload() -> dict[str, Any]:
            form = aiohttp.FormData()
            form.add_field("file", os.urandom(ARTIFACT_BYTES), filename="blob.bin")
            return await exchange(client, "POST", f"/ap/v1/agent/tasks/{task_id}/artifacts", data=form)

        accepted, refused = await until_refused(upload, 100)
        steps.append(
            {
                "protocol": "agent-protocol",
                "limit": f"max_stored_bytes = {limits.max_stored_bytes:,}",
                "accepted_before": f"{accepted} artifacts of 10 KB",
                **refused,
            }
        )

        async def create() -> dict[str, Any]:
            return await exchange(client, "POST", "/ap/v1/agent/tasks", json={"input": "one more"})

        accepted, refused = await until_refused(create, 1000)
        steps.append(
            {
                "protocol": "agent-protocol",
                "limit": f"max_stored_objects = {limits.max_stored_objects}",
                "accepted_before": f"{accepted} more tasks",
                **refused,
            }
        )
        steps.append(
            {
                "protocol": "agent-protocol",
                "limit": "after both refusals",
                **await exchange(client, "GET", f"/ap/v1/agent/tasks/{task_id}"),
            }
        )
        big = {"input": "x" * 5000}
        steps.append(
            {
                "protocol": "agent-protocol",
                "limit": f"max_json_bytes = {limits.max_json_bytes:,}",
                **await exchange(client, "POST", "/ap/v1/agent/tasks", json=big),
            }
        )

        # SGR: stored agents.
        chat = {"model": "sgr_agent", "stream": True, "messages": [{"role": "user", "content": "Research jazz"}]}

        async def agent() -> dict[str, Any]:
            return await exchange(client, "POST", "/v1/chat/completions", json=chat)

        accepted, refused = await until_refused(agent, 1000)
        steps.append(
            {
                "protocol": "sgr-agent-core",
                "limit": f"max_stored_objects = {limits.max_stored_objects}",
                "accepted_before": f"{accepted} agents",
                **refused,
            }
        )
        steps.append(
            {"protocol": "sgr-agent-core", "limit": "after the refusal", **await exchange(client, "GET", "/health")}
        )

        # Synapse: sessions and jobs.
        auth = {"Authorization": "Bearer alice-token"}

        async def session() -> dict[str, Any]:
            return await exchange(
                client, "POST", "/repo/v1/agent/session", headers=auth, json={"agentAccessLevel": "PUBLICLY_ACCESSIBLE"}
            )

        accepted, refused = await until_refused(session, 1000)
        steps.append(
            {
                "protocol": "synapse-agent",
                "limit": f"max_stored_objects = {limits.max_stored_objects}",
                "accepted_before": f"{accepted} sessions",
                **refused,
            }
        )
        steps.append(
            {
                "protocol": "synapse-agent",
                "limit": "after the refusal",
                **await exchange(client, "POST", "/repo/v1/agent/sessions/list", headers=auth, json={}),
            }
        )

        # NeuroSan: open streams (each frame 0.2 s apart, so two streams stay open while a third asks).
        ask = {"user_message": {"type": "HUMAN", "text": "hello"}, "chat_filter": {"chat_filter_type": "MAXIMAL"}}
        path = "/api/v1/hello_world/streaming_chat"
        held = [await client.post(path, json=ask) for _ in range(limits.max_open_streams)]
        try:
            steps.append(
                {
                    "protocol": "neuro-san",
                    "limit": f"max_open_streams = {limits.max_open_streams}",
                    "accepted_before": f"{len(held)} open streams",
                    **await exchange(client, "POST", path, json=ask),
                }
            )
        finally:
            for response in held:
                await response.read()
                response.release()
        async with client.post(path, json=ask) as response:
            frames = (await response.read()).decode().splitlines()
            after = {"request": f"POST {path}", "status": response.status, "body": f"{len(frames)} NDJSON frames"}
        steps.append({"protocol": "neuro-san", "limit": "after the streams closed", **after})
    return steps


def _counts(step: dict[str, Any]) -> str:
    text = ", ".join(f"{n:,} x {status}" for status, n in step["statuses"].items())
    return text + (" (stopped early: time bound)" if step["stopped_early"] else "")


def table(part1: dict[str, Any], steps: list[dict[str, Any]]) -> str:
    mib = 1024.0
    lines = [
        "| measure | value |",
        "|---|---:|",
        f"| RSS after start and 50 reads | {part1['rss_kib_baseline'] / mib:.1f} MiB |",
        f"| tasks created ({part1['tasks']['per_second']:,.0f}/s): statuses | {_counts(part1['tasks'])} |",
        f"| RSS after the tasks | {part1['rss_kib_after_tasks'] / mib:.1f} MiB |",
        f"| bytes per task | {part1['bytes_per_task']:,} |",
        f"| 10 KB artifacts uploaded ({part1['artifacts']['per_second']:,.0f}/s): statuses | "
        f"{_counts(part1['artifacts'])} |",
        f"| RSS after the artifacts | {part1['rss_kib_after_artifacts'] / mib:.1f} MiB |",
        f"| bytes per artifact (10,240 B of data) | {part1['bytes_per_artifact']:,} |",
    ]
    if part1.get("at_default_limits_mib"):
        lines.append(
            f"| projected RSS at the default limits (200,000 objects + 512 MiB) | "
            f"{part1['at_default_limits_mib']:,.0f} MiB |"
        )
    lines += ["", "| protocol | limit | accepted first | request | status | body |", "|---|---|---|---|---:|---|"]
    for s in steps:
        body = json.dumps(s["body"]) if not isinstance(s["body"], str) else s["body"]
        retry = f" (Retry-After: {s['retry_after']})" if "retry_after" in s else ""
        lines.append(
            f"| {s['protocol']} | {s['limit']} | {s.get('accepted_before', '')} | {s['request']} | "
            f"{s['status']}{retry} | `{body[:160]}` |"
        )
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tasks", type=int, default=100_000)
    parser.add_argument("--artifacts", type=int, default=10_000)
    parser.add_argument("--max-seconds", type=float, default=300.0, help="bound on each fill step (default 300)")
    parser.add_argument("--output", default="memory", help="results file stem under bench/results/")
    args = parser.parse_args(argv)
    if args.tasks + args.artifacts > 190_000:
        parser.error("stay under the default 200,000-object limit: --tasks + --artifacts <= 190,000")
    facts = machine()
    pin_self(CLIENT_CPU)
    port = free_port()
    print(f"part 1: {args.tasks:,} tasks and {args.artifacts:,} artifacts of 10 KB", flush=True)
    with server("mock", mock_command(port, "--protocol", "agent-protocol"), port, SERVER_CPU) as srv:
        part1 = asyncio.run(fill(srv.url, srv.pid, args.tasks, args.artifacts, args.max_seconds))
    if part1["bytes_per_task"] and part1["bytes_per_artifact"]:
        objects = MockLimits().max_stored_objects
        part1["at_default_limits_mib"] = round(
            (
                part1["rss_kib_baseline"] * 1024
                + objects * part1["bytes_per_task"]
                + MockLimits().max_stored_bytes / ARTIFACT_BYTES * part1["artifact_overhead_bytes"]
                + MockLimits().max_stored_bytes
            )
            / (1 << 20)
        )
    print("part 2: limits exceeded", flush=True)
    steps = asyncio.run(limits_demo())
    text = table(part1, steps)
    print("\n" + text)
    save(f"{args.output}.json", {"machine": facts, "settings": vars(args), "fill": part1, "limits": steps})
    (RESULTS / f"{args.output}.md").write_text(f"# Mock memory ({facts['date']})\n\n" + text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
