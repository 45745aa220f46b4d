"""Shared helpers for the benchmarks: loopback servers as subprocesses, CPU pinning, machine facts.

Every server here is started on 127.0.0.1 on a free port and stopped by its PID in ``finally``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import resource
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")
ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "bench"
RESULTS = BENCH / "results"
PYTHON = sys.executable
HOST = "127.0.0.1"

SERVER_CPU = 0
"""The core the server under test is pinned to; load generators and clients take the other one."""
CLIENT_CPU = 1


def can_pin() -> bool:
    return hasattr(os, "sched_setaffinity") and (os.cpu_count() or 1) >= 2


def pinned(cpu: int | None) -> list[str]:
    """A ``taskset`` prefix that pins a command to one core, or nothing when pinning is off."""
    if cpu is None or not can_pin() or shutil.which("taskset") is None:
        return []
    return ["taskset", "-c", str(cpu)]


def pin_self(cpu: int | None) -> None:
    if cpu is not None and can_pin():
        os.sched_setaffinity(0, {cpu})


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


def wait_for_port(port: int, process: subprocess.Popen[bytes], timeout: float = 60.0) -> None:
    """Until something accepts TCP on the port; fails early if the process died."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"server exited with code {process.returncode} before listening on {port}")
        with contextlib.suppress(OSError), socket.create_connection((HOST, port), timeout=0.5):
            return
        time.sleep(0.1)
    raise RuntimeError(f"nothing listened on {HOST}:{port} within {timeout:g} s")


def stop(process: subprocess.Popen[bytes], grace: float = 5.0) -> None:
    """SIGTERM by PID, then SIGKILL by PID if it is still there after ``grace`` seconds."""
    if process.poll() is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        os.kill(process.pid, signal.SIGTERM)
    try:
        process.wait(grace)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.kill(process.pid, signal.SIGKILL)
        process.wait(grace)


@dataclass(slots=True)
class Server:
    name: str
    port: int
    process: subprocess.Popen[bytes]

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.port}"

    @property
    def pid(self) -> int:
        return self.process.pid


@contextlib.contextmanager
def server(name: str, command: Sequence[str], port: int, cpu: int | None, log: Path | None = None) -> Iterator[Server]:
    """Start ``command`` (which must listen on ``port``), yield it, stop it by PID."""
    out = log.open("wb") if log is not None else None
    try:
        process = subprocess.Popen(
            [*pinned(cpu), *command],
            stdin=subprocess.DEVNULL,
            stdout=out if out is not None else subprocess.DEVNULL,
            stderr=subprocess.STDOUT if out is not None else subprocess.DEVNULL,
            cwd=ROOT,
        )
        try:
            wait_for_port(port, process)
            yield Server(name, port, process)
        finally:
            stop(process)
    finally:
        if out is not None:
            out.close()


def wrk_settings(args: argparse.Namespace, **more: Any) -> dict[str, Any]:
    """The settings a wrk-driven benchmark records beside its figures, plus its own ``more``."""
    return {
        "rounds": args.rounds,
        "duration_s": args.duration,
        "warmup_s": args.warmup,
        "threads": args.threads,
        "connections": args.connections,
        **more,
    }


def mock_command(port: int, *extra: str) -> list[str]:
    return [PYTHON, "-m", "mockserver", "--host", HOST, "--port", str(port), *extra]


def http(method: str, url: str, body: Any = None, timeout: float = 10.0) -> tuple[int, bytes]:
    """One small request with the standard library; JSON body if given. Never raises on 4xx/5xx."""
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url, data=data, method=method)
    if data is not None:
        request.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return int(response.status), bytes(response.read())
    except urllib.error.HTTPError as exc:
        return int(exc.code), bytes(exc.read())


def version(package: str) -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "not installed"


def command_output(command: Sequence[str]) -> str:
    try:
        done = subprocess.run(list(command), capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return "unavailable"
    return (done.stdout or done.stderr).strip().splitlines()[0] if (done.stdout or done.stderr).strip() else ""


def cpu_model() -> str:
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown"


def memory_total() -> str:
    with contextlib.suppress(OSError):
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return f"{int(line.split()[1]) / (1 << 20):.1f} GiB"
    return "unknown"


def machine() -> dict[str, Any]:
    """The facts a reader needs to compare a figure with their own."""
    return {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "nproc": os.cpu_count(),
        "cpu_model": cpu_model(),
        "memory": memory_total(),
        "free_h": command_output(["sh", "-c", "free -h | sed -n 2p"]),
        "kernel": platform.release(),
        "python": platform.python_version(),
        "aiohttp": version("aiohttp"),
        "openapi-core": version("openapi-core"),
        "schemathesis": version("schemathesis"),
        "jsonschema-rs": version("jsonschema-rs"),
        "hypothesis": version("hypothesis"),
        "git_commit": command_output(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"]),
        "pinning": f"server on CPU {SERVER_CPU}, client on CPU {CLIENT_CPU}" if can_pin() else "off",
    }


def write_json(name: str, data: Any) -> Path:
    path = RESULTS / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2, sort_keys=False) + "\n")
    return path


def write_table(name: str, title: str, text: str, facts: dict[str, Any]) -> Path:
    """``results/<name>.md``: a heading with the run's date, then the table."""
    path = RESULTS / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"# {title} ({facts['date']})\n\n{text}")
    return path


def toml_text(data: dict[str, Any], prefix: str = "") -> str:
    """A TOML document of nested dicts, lists of tables, strings, numbers, booleans and lists of
    scalars: enough for a ``schemathesis.toml`` (the standard library reads TOML but cannot write it)."""

    def scalar(value: Any) -> str:
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, int | float):
            return repr(value)
        if isinstance(value, str):
            return json.dumps(value)  # a JSON string is a valid TOML basic string
        if isinstance(value, list):
            return "[" + ", ".join(scalar(v) for v in value) + "]"
        if isinstance(value, dict):
            return "{" + ", ".join(f"{json.dumps(k)} = {scalar(v)}" for k, v in value.items()) + "}"
        raise TypeError(f"no TOML form for {type(value).__name__}")

    def is_tables(value: Any) -> bool:
        return isinstance(value, list) and bool(value) and all(isinstance(v, dict) for v in value)

    lines = [f"{json.dumps(k)} = {scalar(v)}" for k, v in data.items() if not isinstance(v, dict) and not is_tables(v)]
    out = "\n".join(lines) + ("\n" if lines else "")
    for key, value in data.items():
        name = f"{prefix}{json.dumps(key)}"
        if isinstance(value, dict):
            out += f"\n[{name}]\n" + toml_text(value, f"{name}.")
        elif is_tables(value):
            for item in value:
                out += f"\n[[{name}]]\n" + "\n".join(f"{json.dumps(k)} = {scalar(v)}" for k, v in item.items()) + "\n"
    return out


def median(values: Sequence[float]) -> float:
    """The middle value (the lower of the two middle ones for an even count: an observed figure)."""
    ordered = sorted(values)
    return ordered[(len(ordered) - 1) // 2]


def percentile(values: Sequence[float], pct: float) -> float:
    """Nearest-rank percentile of a non-empty sequence."""
    ordered = sorted(values)
    rank = max(0, min(len(ordered) - 1, round(pct / 100 * len(ordered) + 0.5) - 1))
    return ordered[rank]


def rss_kib(pid: int) -> int:
    """Resident set size of a process from /proc (Linux), in KiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError(f"no VmRSS for PID {pid}")


# --- wrk runs, side by side ------------------------------------------------------------------------

TASK_BODY = {
    "input": "Write 'Washington' to the file 'output.txt'.",
    "additional_input": {"debug": False, "mode": "benchmarks"},
}
STORED_TASKS = 5
"""Tasks stored before a read is measured, so the read lists real ones."""


@dataclass(frozen=True, slots=True)
class Scenario:
    name: str
    method: str
    path: str
    body: dict[str, Any] | None
    servers: tuple[str, ...]
    targeted: bool
    """Whether the issue's targets apply (read and write)."""


SCENARIOS = (
    Scenario("read", "GET", "/ap/v1/agent/tasks", None, ("bare", "mock", "prism"), True),
    Scenario("write", "POST", "/ap/v1/agent/tasks", TASK_BODY, ("bare", "mock", "prism"), True),
    Scenario(
        "neuro-san stream",
        "POST",
        "/api/v1/hello_world/streaming_chat",
        {
            "user_message": {"type": "HUMAN", "text": "Announce that the benchmark is running"},
            "chat_filter": {"chat_filter_type": "MAXIMAL"},
        },
        ("bare", "mock"),
        False,
    ),
    Scenario(
        "sgr stream",
        "POST",
        "/v1/chat/completions",
        {
            "model": "sgr_agent",
            "stream": True,
            "messages": [{"role": "user", "content": "Research the history of jazz music"}],
        },
        ("bare", "mock"),
        False,
    ),
)

LUA_DONE = r"""
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format('WRKJSON {"requests":%d,"duration_us":%d,"bytes":%d,"errors_connect":%d,' ..
    '"errors_read":%d,"errors_write":%d,"errors_status":%d,"errors_timeout":%d,"latency_mean_us":%.1f,' ..
    '"latency_max_us":%d,"p50_us":%d,"p90_us":%d,"p99_us":%d,"p999_us":%d}\n',
    summary.requests, summary.duration, summary.bytes, e.connect, e.read, e.write, e.status, e.timeout,
    latency.mean, latency.max, latency:percentile(50), latency:percentile(90), latency:percentile(99),
    latency:percentile(99.9)))
end
"""


def lua_script(scenario: Scenario) -> str:
    lines = [f'wrk.method = "{scenario.method}"']
    if scenario.body is not None:
        text = json.dumps(scenario.body)
        if "]==]" in text or not text.isascii():
            raise ValueError("the body must be ASCII and must not contain ']==]'")
        lines.append(f"wrk.body = [==[{text}]==]")
        lines.append('wrk.headers["Content-Type"] = "application/json"')
    return "\n".join(lines) + "\n" + LUA_DONE


def run_wrk(url: str, lua: Path, duration: float, threads: int, connections: int) -> tuple[dict[str, Any], str]:
    command = [
        *pinned(CLIENT_CPU),
        "wrk",
        f"-t{threads}",
        f"-c{connections}",
        f"-d{max(1, round(duration))}s",
        "--latency",
        "--timeout",
        "5s",
        "-s",
        str(lua),
        url,
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=duration + 60, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"wrk failed ({done.returncode}): {done.stderr.strip()}")
    for line in done.stdout.splitlines():
        if line.startswith("WRKJSON "):
            return json.loads(line.removeprefix("WRKJSON ")), done.stdout
    raise RuntimeError(f"wrk printed no summary:\n{done.stdout}")


def sanity(srv: Server, scenario: Scenario) -> dict[str, Any]:
    status, body = http(scenario.method, srv.url + scenario.path, scenario.body)
    if status != 200:
        raise RuntimeError(f"{srv.name} answered {status} to {scenario.method} {scenario.path}: {body[:300]!r}")
    return {"status": status, "body_bytes": len(body)}


def measure(
    srv: Server,
    scenario: Scenario,
    args: argparse.Namespace,
    scripts: Path,
    raw: list[str],
    behind: Server | None = None,
) -> dict[str, Any]:
    """wrk on ``srv``; with ``behind`` (the upstream of a proxy) that server's CPU is recorded too."""
    lua = scripts / f"{scenario.name.replace(' ', '_')}.lua"
    lua.write_text(lua_script(scenario))
    check = sanity(srv, scenario)
    if args.warmup > 0:
        run_wrk(srv.url + scenario.path, lua, args.warmup, args.threads, args.connections)
    cpu_before = process_cpu_seconds(srv.pid)
    behind_before = process_cpu_seconds(behind.pid) if behind is not None else 0.0
    with LoadMeter([srv.pid] + ([behind.pid] if behind is not None else [])) as load:
        stats, stdout = run_wrk(srv.url + scenario.path, lua, args.duration, args.threads, args.connections)
    cpu_used = process_cpu_seconds(srv.pid) - cpu_before
    behind_used = process_cpu_seconds(behind.pid) - behind_before if behind is not None else None
    raw.append(f"### {srv.name} / {scenario.name}: {scenario.method} {scenario.path}\n{stdout}")
    seconds = stats["duration_us"] / 1e6
    errors = sum(v for k, v in stats.items() if k.startswith("errors_"))
    result = {
        "requests": stats["requests"],
        "rps": round(stats["requests"] / seconds, 1),
        "p50_ms": round(stats["p50_us"] / 1000, 2),
        "p90_ms": round(stats["p90_us"] / 1000, 2),
        "p99_ms": round(stats["p99_us"] / 1000, 2),
        "p999_ms": round(stats["p999_us"] / 1000, 2),
        "mean_ms": round(stats["latency_mean_us"] / 1000, 2),
        "max_ms": round(stats["latency_max_us"] / 1000, 2),
        "bytes_per_response": round(stats["bytes"] / max(1, stats["requests"])),
        "body_bytes": check["body_bytes"],
        "errors": errors,
        "server_cpu_percent": round(100 * cpu_used / seconds, 1),
        "server_cpu_us_per_request": round(1e6 * cpu_used / max(1, stats["requests"]), 1),
        "other_load_cores": load.other_cores,
        "wrk": stats,
    }
    if behind_used is not None:
        result["upstream_cpu_us_per_request"] = round(1e6 * behind_used / max(1, stats["requests"]), 1)
    print(
        f"  {srv.name:5} {scenario.name:17} {result['rps']:>9.1f} req/s  p50 {result['p50_ms']:6.2f} ms  "
        f"p99 {result['p99_ms']:7.2f} ms  {result['bytes_per_response']} B/resp  errors {errors}  "
        f"server CPU {result['server_cpu_percent']}%  other load {load.other_cores} cores",
        flush=True,
    )
    return result


def rotated(names: Sequence[T], number: int) -> list[T]:
    """Round ``number``'s order: each name leads a round in turn, so neighbours' load hits all alike."""
    return [*names[number % len(names) :], *names[: number % len(names)]]


def median_run(runs: Sequence[dict[str, Any]], key: str = "rps") -> dict[str, Any]:
    """The run with the median ``key`` (the upper middle for an even count), and every round's figure."""
    middle = sorted(runs, key=lambda r: r[key])[len(runs) // 2]
    return {
        **middle,
        f"{key}_rounds": [r[key] for r in runs],
        "cpu_rounds": [r["server_cpu_us_per_request"] for r in runs],
    }


def require_wrk() -> bool:
    if shutil.which("wrk") is None:
        print("wrk is not installed. On Debian/Ubuntu: apt-get update && apt-get install -y wrk", file=sys.stderr)
        return False
    return True


# --- other load on the machine -------------------------------------------------------------------


def _cpu_jiffies() -> tuple[int, int]:
    """(busy, total) jiffies over all CPUs, from /proc/stat."""
    fields = [int(v) for v in Path("/proc/stat").read_text().splitlines()[0].split()[1:9]]
    idle = fields[3] + fields[4]
    return sum(fields) - idle, sum(fields)


def process_cpu_seconds(pid: int) -> float:
    """utime + stime of a live process, from /proc/PID/stat (USER_HZ = 100)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / 100.0


def _own_cpu_seconds() -> float:
    me = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + children.ru_utime + children.ru_stime


class LoadMeter:
    """CPU used on the whole machine during a block, split into ours and everybody else's.

    Ours = this process, its reaped children (wrk, finished suite runs) and the live ``pids``
    (servers). Other = the rest: a shared machine's neighbours, which make a figure noisy.
    """

    def __init__(self, pids: Sequence[int] = ()) -> None:
        self.pids = list(pids)
        self.other_cores = 0.0
        self.busy_cores = 0.0
        self.seconds = 0.0

    def _ours(self) -> float:
        total = _own_cpu_seconds()
        for pid in self.pids:
            with contextlib.suppress(OSError):
                total += process_cpu_seconds(pid)
        return total

    def __enter__(self) -> LoadMeter:
        self._start = time.monotonic()
        self._jiffies = _cpu_jiffies()
        self._ours_start = self._ours()
        return self

    def __exit__(self, *exc: object) -> None:
        self.seconds = max(time.monotonic() - self._start, 1e-9)
        busy, _ = _cpu_jiffies()
        self.busy_cores = (busy - self._jiffies[0]) / 100.0 / self.seconds
        ours = (self._ours() - self._ours_start) / self.seconds
        self.other_cores = round(max(0.0, self.busy_cores - ours), 2)


def wait_quiet(max_wait: float, threshold: float = 0.15, window: float = 3.0) -> dict[str, Any]:
    """Wait (bounded) until the rest of the machine uses under ``threshold`` cores over ``window`` s."""
    started = time.monotonic()
    seen = []
    while True:
        with LoadMeter() as meter:
            time.sleep(window)
        seen.append(meter.other_cores)
        if meter.other_cores < threshold:
            return {"quiet": True, "waited_s": round(time.monotonic() - started, 1), "other_cores": meter.other_cores}
        if time.monotonic() - started >= max_wait:
            print(
                f"warning: the machine stayed busy ({meter.other_cores:.2f} cores used by other processes); "
                "figures will be noisy",
                file=sys.stderr,
                flush=True,
            )
            return {"quiet": False, "waited_s": round(time.monotonic() - started, 1), "other_cores": max(seen)}


def cpu_children() -> float:
    """CPU seconds of this process's reaped children (utime + stime)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


@dataclass(frozen=True)
class TreeRun:
    """One ``run_from`` command: its result (None when it outlived its bound), wall and CPU
    seconds (the command and the processes it waited for), the other load meanwhile."""

    done: subprocess.CompletedProcess[str] | None
    wall_s: float
    cpu_s: float
    other_load_cores: float


def run_from(tree: Path, command: list[str], timeout: float) -> TreeRun:
    """``command`` (a ``conformance`` CLI) run from ``tree``, its modules first on the path, under a
    LoadMeter. PYTHONHASHSEED is left to the CLI, which pins it itself, as a user's run does."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONHASHSEED"}
    env["PYTHONPATH"] = str(tree)
    before = cpu_children()
    started = time.monotonic()
    with LoadMeter() as load:
        try:
            done: subprocess.CompletedProcess[str] | None = subprocess.run(
                command, cwd=tree, env=env, capture_output=True, text=True, timeout=timeout, check=False
            )
        except subprocess.TimeoutExpired:
            done = None
    return TreeRun(done, round(time.monotonic() - started, 2), round(cpu_children() - before, 2), load.other_cores)
