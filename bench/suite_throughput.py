"""Suite throughput: wall time and generated cases per second of ``python -m conformance run``.

    python bench/suite_throughput.py                          # every protocol, default and --max-examples 50
    python bench/suite_throughput.py --protocol agent-protocol --max-examples 20   # a quick look

For each protocol: ``python -m conformance run --protocol X`` against the embedded reference mock
(started by the runner itself, in a thread of the same process), at the default profile
(--max-examples 10) and at --max-examples N. Reported: wall time (process start to exit,
imports included), the run's own duration, schemathesis cases (results.json stats.schema_cases),
cases per second (schema_cases / duration), and the CPU time the process used.

Scaling: a protocol's run has no internal parallelism (each requirement in turn; schemathesis
runs single-worker), so 2 workers means 2 processes: every protocol's default run sequentially,
vs the same runs on a pool of 2 processes, vs one ``--protocol all`` command (which runs its
protocols in worker processes of its own, one per core). Writes
bench/results/suite_throughput.{json,md}.

Against the schemathesis CLI (``--cli``, or ``--cli-only``): the suite's property-based phase
(``conformance run --phase schema --base-url``) and ``schemathesis run`` on the same document
(``Spec.schemathesis_document``: the servers replaced, the stream media aliases added), the same
configuration written as a ``schemathesis.toml`` (``phases.schema.engine.schemathesis_config``:
checks, seed, max-examples, mode, per-operation settings) and one worker, each against a fresh mock
process on the other core, in rotated order for ``--rounds`` rounds. Both processes get the same
PYTHONHASHSEED (the suite pins 0 itself) and one warmed Hypothesis storage folder, and both run
under the same clock: schemathesis's engine (``ExecutionPlan.execute``, first event to last) timed
in wall and CPU seconds of the whole process, all threads, so start-up is left out on both sides
alike. Reported: the cases each generated, cases per engine second and per engine CPU second, the
per-round ratios (suite / CLI) and their median, wall and CPU of the processes, and the mock's CPU
per side (the same cases cost the server the same). The suite's targeted cases go out after the
engine (the CLI has none): they are counted from its ``--events`` file, left out of the engine's
cases, and counted in a "whole phase" ratio against the phase's own seconds. ``--versus TREE`` runs
another checkout's phase in the same rounds (before/after). The same runs give the scenario phase's
time per requirement (``--phase scenario``, results.json durations; ``--no-scenario`` leaves it out).

The default run of all four protocols (``--default-all ROUNDS``): one ``conformance run --protocol
all`` command, as a user runs it (its protocols in worker processes, one per core: ``--jobs``);
wall and CPU seconds (the command and its workers), the other load, each protocol's phase seconds
from its events file; start-up and exit is what the wall leaves beside the protocols' runs, known
only when they ran one after another (with workers they overlap); ``--versus TREE`` alternates it
with another checkout (before/after).

The pytest plugin under pytest-xdist (``--xdist``, or ``--xdist-only`` for just that): the same
requirements as ``pytest --conformance-protocol P -n 0`` (one process) and ``-n 2`` (two workers,
requirements spread over them, a protocol's schema requirements kept on one), both with
PYTHONHASHSEED=0; reported: wall times, the speed-up, and whether the merged verdicts agree.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from _common import (
    CLIENT_CPU,
    PYTHON,
    RESULTS,
    ROOT,
    SERVER_CPU,
    LoadMeter,
    cpu_children,
    free_port,
    machine,
    median,
    mock_command,
    pinned,
    process_cpu_seconds,
    run_from,
    server,
    toml_text,
    wait_quiet,
    write_json,
    write_table,
)

from conformance.engine.runner import EMBEDDED_TOKENS
from conformance.phases.schema.engine import schemathesis_config
from conformance.run.suites import suite
from specs.documents import PROTOCOLS, load

DEFAULT_EXAMPLES = 10  # the CLI's default --max-examples
TARGET_SECONDS = 30.0  # a default run of one protocol against the mock


def run_suite(
    protocol: str, max_examples: int | None, report_dir: Path, timeout: float, extra: Sequence[str] = ()
) -> dict[str, Any]:
    """One ``conformance run`` process; its wall time, CPU time and results.json stats."""
    command = [
        PYTHON,
        "-m",
        "conformance",
        "run",
        "--protocol",
        protocol,
        "--report-dir",
        str(report_dir),
        "-q",
        *extra,
    ]
    if max_examples is not None:
        command += ["--max-examples", str(max_examples)]
    started = time.monotonic()
    process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        stdout, stderr = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        stdout, stderr = process.communicate()
        return {"protocol": protocol, "error": f"timed out after {timeout:g} s"}
    finally:
        wall = time.monotonic() - started
    row: dict[str, Any] = {
        "protocol": protocol,
        "max_examples": max_examples or DEFAULT_EXAMPLES,
        "exit_code": process.returncode,
        "wall_s": round(wall, 2),
    }
    results = report_dir / "results.json"
    if protocol == "all":
        row["summary_line"] = stdout.strip().splitlines()
        return row
    if not results.exists():
        row["error"] = (stderr.strip() or stdout.strip())[-600:] or "no results.json"
        return row
    data = json.loads(results.read_text())
    stats = data.get("stats", {})
    duration = float(data.get("duration_s") or 0.0)
    cases = int(stats.get("schema_cases") or 0)
    schema_seconds = float(stats.get("schema_seconds") or 0.0)
    row.update(
        {
            "duration_s": round(duration, 2),
            "schema_cases": cases,
            "schema_seconds": schema_seconds,
            "cases_per_s": round(cases / duration, 1) if duration else None,
            "schema_cases_per_s": round(cases / schema_seconds, 1) if schema_seconds else None,
            "requirements": sum(sum(c.values()) for c in data.get("summary", {}).values()),
            "must": data.get("summary", {}).get("must"),
            "summary_line": stdout.strip(),
        }
    )
    return row


def timed(protocol: str, max_examples: int | None, tmp: Path, timeout: float) -> dict[str, Any]:
    """A run alone, with the CPU seconds its process used (children's rusage delta)."""
    before = cpu_children()
    tag = f"{protocol}-{max_examples or DEFAULT_EXAMPLES}"
    with LoadMeter() as load:
        row = run_suite(protocol, max_examples, tmp / tag, timeout)
    row["cpu_s"] = round(cpu_children() - before, 2)
    row["other_load_cores"] = load.other_cores
    if row.get("wall_s"):
        row["cpu_percent_of_one_core"] = round(100 * row["cpu_s"] / row["wall_s"])
    shown = f"{row['schema_cases']} cases, {row['cases_per_s']} cases/s, " if "schema_cases" in row else ""
    error = f"  ERROR {row['error'][:200]}" if "error" in row else ""
    print(
        f"  {tag:28} wall {row.get('wall_s')} s, {shown}CPU {row['cpu_s']} s, exit {row.get('exit_code')}, "
        f"other load {load.other_cores} cores{error}",
        flush=True,
    )
    return row


def scaling(protocols: list[str], tmp: Path, timeout: float) -> dict[str, Any]:
    print("scaling: sequential, 2-process pool, one --protocol all process", flush=True)
    with LoadMeter() as seq_load:
        sequential = [run_suite(p, None, tmp / f"seq-{p}", timeout) for p in protocols]
    sequential_wall = seq_load.seconds

    with LoadMeter() as par_load, ThreadPoolExecutor(max_workers=2) as pool:  # a thread waits on each process
        parallel = list(pool.map(lambda p: run_suite(p, None, tmp / f"par-{p}", timeout), protocols))
    parallel_wall = par_load.seconds

    all_wall = None
    if set(protocols) == set(PROTOCOLS):
        started = time.monotonic()
        run_suite("all", None, tmp / "all", timeout * len(protocols))
        all_wall = time.monotonic() - started

    out = {
        "protocols": protocols,
        "sequential_wall_s": round(sequential_wall, 2),
        "two_workers_wall_s": round(parallel_wall, 2),
        "speedup": round(sequential_wall / parallel_wall, 2) if parallel_wall else None,
        "protocol_all_one_process_wall_s": round(all_wall, 2) if all_wall is not None else None,
        "cases_sequential": sum(r.get("schema_cases", 0) for r in sequential),
        "cases_two_workers": sum(r.get("schema_cases", 0) for r in parallel),
        "exit_codes_sequential": [r.get("exit_code") for r in sequential],
        "exit_codes_two_workers": [r.get("exit_code") for r in parallel],
        "per_run_two_workers": {r["protocol"]: r.get("wall_s") for r in parallel},
        "busy_cores_sequential": round(seq_load.busy_cores, 2),
        "busy_cores_two_workers": round(par_load.busy_cores, 2),
        "other_load_cores": max(seq_load.other_cores, par_load.other_cores),
    }
    print(
        f"  sequential {out['sequential_wall_s']} s, 2 workers {out['two_workers_wall_s']} s "
        f"(speedup {out['speedup']}x), --protocol all {out['protocol_all_one_process_wall_s']} s; cases "
        f"{out['cases_sequential']} vs {out['cases_two_workers']}",
        flush=True,
    )
    return out


def plugin_run(protocols: list[str], workers: int, max_examples: int, tmp: Path, timeout: float) -> dict[str, Any]:
    """One pytest session of the plugin's items only (run from an empty folder), and its verdicts."""
    out = tmp / f"xdist-{workers}"
    out.mkdir(parents=True, exist_ok=True)
    protocol = protocols[0] if len(protocols) == 1 else "all"
    command = [
        PYTHON,
        "-m",
        "pytest",
        "-p",
        "no:cacheprovider",
        "-q",
        "-n",
        str(workers),
        "--conformance-protocol",
        protocol,
        "--conformance-max-examples",
        str(max_examples),
        "--conformance-report-dir",
        str(out / "reports"),
    ]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONHASHSEED": "0"}
    started = time.monotonic()
    done = subprocess.run(command, cwd=out, env=env, capture_output=True, text=True, timeout=timeout, check=False)
    wall = time.monotonic() - started
    verdicts: dict[str, str] = {}
    for results in sorted((out / "reports").glob("**/results.json")):
        verdicts.update({r["id"]: r["status"] for r in json.loads(results.read_text())["requirements"]})
    return {
        "workers": workers,
        "wall_s": round(wall, 2),
        "exit_code": done.returncode,
        "verdicts": verdicts,
        "tail": done.stdout.strip().splitlines()[-1:],
    }


def xdist_scaling(protocols: list[str], max_examples: int, tmp: Path, timeout: float) -> dict[str, Any]:
    print(
        f"pytest plugin: -n 0 vs -n 2 for {', '.join(protocols)} (--conformance-max-examples {max_examples})",
        flush=True,
    )
    with LoadMeter() as one_load:
        one = plugin_run(protocols, 0, max_examples, tmp, timeout)
    with LoadMeter() as two_load:
        two = plugin_run(protocols, 2, max_examples, tmp, timeout)
    out = {
        "protocols": protocols,
        "max_examples": max_examples,
        "one_process_wall_s": one["wall_s"],
        "two_workers_wall_s": two["wall_s"],
        "speedup": round(one["wall_s"] / two["wall_s"], 2) if two["wall_s"] else None,
        "requirements": len(one["verdicts"]),
        "same_verdicts": one["verdicts"] == two["verdicts"] and bool(one["verdicts"]),
        "exit_codes": [one["exit_code"], two["exit_code"]],
        "busy_cores": [round(one_load.busy_cores, 2), round(two_load.busy_cores, 2)],
        "other_load_cores": max(one_load.other_cores, two_load.other_cores),
        "tails": [one["tail"], two["tail"]],
    }
    print(
        f"  -n 0 {out['one_process_wall_s']} s, -n 2 {out['two_workers_wall_s']} s (speedup {out['speedup']}x), "
        f"{out['requirements']} requirements, same verdicts: {out['same_verdicts']}, "
        f"other load {out['other_load_cores']:.2f} cores",
        flush=True,
    )
    return out


def xdist_table(x: dict[str, Any]) -> str:
    return (
        "\n".join(
            [
                "| pytest plugin, requirements of | --conformance-max-examples | -n 0 | -n 2 | speedup | "
                "same verdicts | busy cores (-n 0 / -n 2) | other load |",
                "|---|---:|---:|---:|---:|---|---|---:|",
                f"| {', '.join(x['protocols'])} ({x['requirements']}) | {x['max_examples']} | "
                f"{x['one_process_wall_s']:.1f} s | {x['two_workers_wall_s']:.1f} s | {x['speedup']}x | "
                f"{'yes' if x['same_verdicts'] else '**NO**'} | "
                f"{x['busy_cores'][0]} / {x['busy_cores'][1]} | {x['other_load_cores']:.2f} cores |",
            ]
        )
        + "\n"
    )


def table(rows: list[dict[str, Any]], scale: dict[str, Any] | None) -> str:
    lines = [
        "| protocol | --max-examples | wall s | run s | schema cases | cases/s | CPU s | MUST | other load | target |",
        "|---|---:|---:|---:|---:|---:|---:|---|---:|---|",
    ]
    for r in rows:
        if "error" in r:
            lines.append(
                f"| {r['protocol']} | {r.get('max_examples', '')} | {r.get('wall_s', '')} | | | | | "
                f"error: {r['error'][:80]} | | |"
            )
            continue
        must = r.get("must") or {}
        must_text = f"{must.get('passed', 0)} passed, {must.get('failed', 0)} failed"
        target = ""
        if r["max_examples"] == DEFAULT_EXAMPLES:
            target = f"< {TARGET_SECONDS:g} s: **{'met' if r['wall_s'] < TARGET_SECONDS else 'MISSED'}**"
        lines.append(
            f"| {r['protocol']} | {r['max_examples']} | {r['wall_s']:.1f} | {r['duration_s']:.1f} | "
            f"{r['schema_cases']:,} | {r['cases_per_s']} | {r['cpu_s']:.1f} | {must_text} | "
            f"{r['other_load_cores']:.2f} cores | {target} |"
        )
    if scale:
        all_wall = scale["protocol_all_one_process_wall_s"]
        lines += [
            "",
            "| default runs of | sequential | 2 worker processes | speedup | one `--protocol all` process | "
            "busy cores (seq / 2 workers) | other load |",
            "|---|---:|---:|---:|---:|---|---:|",
            f"| {', '.join(scale['protocols'])} | {scale['sequential_wall_s']:.1f} s | "
            f"{scale['two_workers_wall_s']:.1f} s | {scale['speedup']}x | "
            f"{f'{all_wall:.1f} s' if all_wall is not None else 'n/a'} | "
            f"{scale['busy_cores_sequential']} / {scale['busy_cores_two_workers']} | "
            f"{scale['other_load_cores']:.2f} cores |",
        ]
    return "\n".join(lines) + "\n"


SCHEMATHESIS = Path(PYTHON).with_name("schemathesis")
ENGINE_CLOCK = "BENCH_ENGINE_CLOCK"
"""The file the clocked process writes its engine's wall and CPU seconds to."""
CLOCKED = f"""
import json, os, runpy, sys, time
import schemathesis.engine.core as core
execute = core.ExecutionPlan.execute
def clocked(self, engine):
    wall, cpu = time.perf_counter(), time.process_time()
    yield from execute(self, engine)
    with open(os.environ["{ENGINE_CLOCK}"], "w") as out:
        json.dump({{"wall_s": time.perf_counter() - wall, "cpu_s": time.process_time() - cpu}}, out)
core.ExecutionPlan.execute = clocked
sys.argv = sys.argv[1:]
if sys.argv[0] == "schemathesis":
    from schemathesis.cli import schemathesis
    schemathesis()
else:
    runpy.run_module(sys.argv[0], run_name="__main__", alter_sys=True)
"""
"""Either side run with schemathesis's engine clocked. Passed with ``python -c``, not as a file: a
script's literals would join Hypothesis's pool of local constants, and change the CLI's cases."""


def cli_inputs(protocol: str, max_examples: int, folder: Path) -> tuple[Path, Path]:
    """The document and ``schemathesis.toml`` the suite's schema phase hands schemathesis, written
    to files for its CLI."""
    protocol_suite, spec = suite(protocol), load(protocol)
    requirements = [c.requirement for c in protocol_suite.registry if c.requirement.phase == "schema"]
    headers = {"Authorization": f"Bearer {EMBEDDED_TOKENS[0]}"} if protocol_suite.needs_auth else {}
    config = schemathesis_config(
        spec,
        requirements,
        seed=0,
        max_examples=max_examples,
        timeout=10.0,
        headers=headers,
        skip_body_checks_for=protocol_suite.streaming_operations,
        expected_statuses=protocol_suite.schema_expected_statuses,
    )
    aliases = {op: protocol_suite.stream_media_types for op in protocol_suite.streaming_operations}
    document = spec.schemathesis_document(server="/", media_aliases=aliases)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "openapi.json").write_text(json.dumps(document))
    (folder / "schemathesis.toml").write_text(toml_text(config))
    return folder / "openapi.json", folder / "schemathesis.toml"


def _client(
    command: list[str], timeout: float, cwd: Path, env: dict[str, str] | None = None
) -> tuple[subprocess.CompletedProcess[str], float, float]:
    """A client process pinned to the client core: its result, wall seconds and CPU seconds."""
    before = cpu_children()
    started = time.monotonic()
    done = subprocess.run(
        [*pinned(CLIENT_CPU), *command],
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})},
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    return done, time.monotonic() - started, cpu_children() - before


def _clocked(
    command: list[str], timeout: float, cwd: Path, folder: Path, storage: Path, tree: Path = ROOT
) -> tuple[subprocess.CompletedProcess[str], float, float, dict[str, float]]:
    """``command`` (``module args...`` or ``schemathesis args...``) run with the engine clocked, with
    ``storage`` as Hypothesis's folder and ``tree``'s modules first on the path; the engine's
    seconds are empty when it did not finish."""
    clock = folder / "engine-clock.json"
    clock.unlink(missing_ok=True)
    env = {
        "PYTHONHASHSEED": "0",
        "HYPOTHESIS_STORAGE_DIRECTORY": str(storage),
        ENGINE_CLOCK: str(clock),
        "PYTHONPATH": str(tree),
    }
    folder.mkdir(parents=True, exist_ok=True)
    done, wall, cpu = _client([PYTHON, "-c", CLOCKED, *command], timeout, cwd, env)
    engine = json.loads(clock.read_text()) if clock.exists() else {}
    return done, wall, cpu, engine


def _phase_command(protocol: str, base_url: str, phase: str, folder: Path, *more: str) -> list[str]:
    """``conformance run`` of one phase against a running mock, its reports in ``folder``."""
    run = [PYTHON, "-m", "conformance", "run", "--protocol", protocol, "--base-url", base_url]
    tokens = ["--token", EMBEDDED_TOKENS[0], "--second-token", EMBEDDED_TOKENS[1]]
    return [*run, *tokens, "--phase", phase, *more, "-q", "--report-dir", str(folder)]


def _engine_figures(cases: int, wall: float, cpu: float, engine: dict[str, float], exit_code: int) -> dict[str, Any]:
    return {
        "cases": cases,
        "engine_s": round(engine["wall_s"], 3),
        "engine_cpu_s": round(engine["cpu_s"], 3),
        "wall_s": round(wall, 2),
        "cpu_s": round(cpu, 2),
        "exit_code": exit_code,
    }


def suite_side(
    protocol: str, max_examples: int, base_url: str, folder: Path, storage: Path, timeout: float, tree: Path = ROOT
) -> dict[str, Any]:
    """``conformance run --phase schema`` against a running mock, run from ``tree`` (this checkout,
    or another one for a before/after pair)."""
    events = folder / "events.jsonl"
    more = ("--max-examples", str(max_examples), "--events", str(events))
    command = _phase_command(protocol, base_url, "schema", folder, *more)[2:]
    done, wall, cpu, engine = _clocked(command, timeout, tree, folder, storage, tree)
    results = folder / "results.json"
    if not results.exists() or not engine:
        return {"error": (done.stderr.strip() or done.stdout.strip())[-400:] or "no results.json"}
    stats = json.loads(results.read_text()).get("stats", {})
    phase_cases = int(stats.get("schema_cases") or 0)
    # the targeted cases (phases/schema/targeted.py) go out after schemathesis's engine, which the
    # CLI has alone: the engine's own cases are the phase's less those
    targeted = sum(1 for case in _case_events(events) if case.get("stage") == "targeted")
    got = _engine_figures(phase_cases - targeted, wall, cpu, engine, done.returncode)
    got["phase_s"] = float(stats.get("schema_seconds") or 0.0)
    got["phase_cases"] = phase_cases
    got["targeted_cases"] = targeted
    return got


def _case_events(events: Path) -> Iterator[dict[str, Any]]:
    """The ``case_finished`` events of a run's ``--events`` file."""
    if not events.exists():
        return
    for line in events.read_text(encoding="utf-8").splitlines():
        event = json.loads(line)
        if "outcome" in event and "stage" in event:
            yield event


def cli_side(
    document: Path, settings: Path, base_url: str, folder: Path, storage: Path, timeout: float
) -> dict[str, Any]:
    """``schemathesis run`` on the same document and settings, one worker, no report files."""
    command = ["schemathesis", "--no-color", "--config-file", str(settings), "run", str(document)]
    done, wall, cpu, engine = _clocked(
        [*command, "--url", base_url, "--workers", "1"], timeout, folder, folder, storage
    )
    generated = re.search(r"(\d+) generated", done.stdout)
    running = re.search(r" in ([\d.]+)s =", done.stdout)
    if generated is None or running is None or not engine:
        return {"error": (done.stdout.strip() or done.stderr.strip())[-400:]}
    got = _engine_figures(int(generated.group(1)), wall, cpu, engine, done.returncode)
    got["phase_s"] = float(running.group(1))
    return got


def scenario_side(protocol: str, base_url: str, folder: Path, timeout: float) -> dict[str, Any]:
    """``conformance run --phase scenario``: seconds per requirement, from results.json."""
    done, wall, cpu = _client(_phase_command(protocol, base_url, "scenario", folder), timeout, ROOT)
    results = folder / "results.json"
    if not results.exists():
        return {"error": (done.stderr.strip() or done.stdout.strip())[-400:] or "no results.json"}
    data = json.loads(results.read_text())
    durations = [float(r.get("duration_s") or 0.0) for r in data["requirements"]]
    return {
        "requirements": len(durations),
        "phase_s": round(sum(durations), 2),
        "per_requirement_ms": round(1000 * sum(durations) / len(durations), 1) if durations else None,
        "slowest": sorted(
            ((round(float(r.get("duration_s") or 0.0), 2), r["id"]) for r in data["requirements"]), reverse=True
        )[:3],
        "wall_s": round(wall, 2),
        "cpu_s": round(cpu, 2),
    }


def against_cli(
    protocols: list[str],
    max_examples: int,
    rounds: int,
    tmp: Path,
    timeout: float,
    versus: Path | None = None,
    scenario: bool = True,
) -> list[dict[str, Any]]:
    """Suite and CLI side by side, each on a fresh mock, the order rotated per round; medians. With
    ``versus``, the suite of that checkout too ("before"); with ``scenario``, the scenario phase."""
    rows = []
    storage = tmp / "hypothesis"
    for protocol in protocols:
        base_path = load(protocol).info.base_path
        port = free_port()
        inputs = cli_inputs(protocol, max_examples, tmp / f"cli-{protocol}")
        with server("mock", mock_command(port, "--protocol", protocol), port, SERVER_CPU) as srv:
            # a first CLI run, not measured, writes Hypothesis's caches (its character tables) for both
            cli_side(*inputs, srv.url + base_path, tmp / "warm-up", storage, timeout)
        sides = ["suite", "cli", *(["scenario"] if scenario else []), *(["before"] if versus is not None else [])]
        runs: dict[str, list[dict[str, Any]]] = {side: [] for side in sides}
        for n in range(rounds):
            order = sides[n % len(sides) :] + sides[: n % len(sides)]
            for side in order:
                port = free_port()
                command = mock_command(port, "--protocol", protocol, "--job-seconds", "0.3")
                with LoadMeter() as load_meter, server("mock", command, port, SERVER_CPU) as srv:
                    url = srv.url + base_path
                    mock_cpu = process_cpu_seconds(srv.pid)
                    if side == "suite":
                        got = suite_side(protocol, max_examples, url, tmp / f"suite-{protocol}-{n}", storage, timeout)
                    elif side == "cli":
                        got = cli_side(*inputs, url, tmp / f"cli-{protocol}", storage, timeout)
                    elif side == "before" and versus is not None:
                        folder = tmp / f"before-{protocol}-{n}"
                        got = suite_side(protocol, max_examples, url, folder, storage, timeout, versus)
                    else:
                        got = scenario_side(protocol, url, tmp / f"scenario-{protocol}-{n}", timeout)
                    got["mock_cpu_s"] = round(process_cpu_seconds(srv.pid) - mock_cpu, 2)
                got["other_load_cores"] = load_meter.other_cores
                runs[side].append(got)
                print(f"  {protocol:15} round {n + 1} {side:8} {json.dumps(got)[:260]}", flush=True)
        rows.append(_against_row(protocol, max_examples, runs))
    return rows


def _against_row(protocol: str, max_examples: int, runs: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    def med(side: str, key: str) -> float | None:
        values = [r[key] for r in runs.get(side, []) if r.get(key) is not None and "error" not in r]
        return median(values) if values else None

    row: dict[str, Any] = {"protocol": protocol, "max_examples": max_examples, "runs": runs}
    for side in [side for side in ("suite", "cli", "before") if side in runs]:
        for key in (
            "cases",
            "phase_cases",
            "targeted_cases",
            "engine_s",
            "engine_cpu_s",
            "phase_s",
            "wall_s",
            "cpu_s",
            "mock_cpu_s",
        ):
            row[f"{side}_{key}"] = med(side, key)
        for run in runs[side]:
            if "error" not in run:
                run["cases_per_s"] = round(run["cases"] / run["engine_s"], 2) if run["engine_s"] else None
                run["cases_per_cpu_s"] = round(run["cases"] / run["engine_cpu_s"], 2) if run["engine_cpu_s"] else None
                # the whole phase as its own clock reads it: the suite's with its targeted cases
                whole = run.get("phase_cases", run["cases"])
                run["phase_cases_per_s"] = round(whole / run["phase_s"], 2) if run.get("phase_s") else None
        row[f"{side}_cases_per_s"] = med(side, "cases_per_s")
        row[f"{side}_cases_per_cpu_s"] = med(side, "cases_per_cpu_s")
    # each round's suite / CLI ratio compares two runs minutes apart on the same machine: their
    # median is the figure, the range beside it
    for key in ("cases_per_s", "cases_per_cpu_s", "phase_cases_per_s"):
        if "before" in runs:
            before = [
                b[key] / c[key] for b, c in zip(runs["before"], runs["cli"], strict=False) if b.get(key) and c.get(key)
            ]
            row[f"before_{key}_ratio"] = round(median(before), 3) if before else None
            row[f"before_{key}_ratios"] = [round(r, 3) for r in before]
        ratios = [
            s[key] / c[key] for s, c in zip(runs["suite"], runs["cli"], strict=False) if s.get(key) and c.get(key)
        ]
        row[f"{key}_ratio"] = round(median(ratios), 3) if ratios else None
        row[f"{key}_ratios"] = [round(r, 3) for r in ratios]
    row["wall_ratio"] = (
        round(row["suite_wall_s"] / row["cli_wall_s"], 3) if row["suite_wall_s"] and row["cli_wall_s"] else None
    )
    row["cpu_ratio"] = (
        round(row["suite_cpu_s"] / row["cli_cpu_s"], 3) if row["suite_cpu_s"] and row["cli_cpu_s"] else None
    )
    row["scenario_requirements"] = med("scenario", "requirements")
    row["scenario_per_requirement_ms"] = med("scenario", "per_requirement_ms")
    row["scenario_phase_s"] = med("scenario", "phase_s")
    row["other_load_cores"] = max((r.get("other_load_cores", 0.0) for side in runs.values() for r in side), default=0.0)
    return row


def against_table(rows: list[dict[str, Any]]) -> str:
    def show(value: Any, unit: str = "") -> str:
        return "n/a" if value is None else f"{value:g}{unit}" if isinstance(value, float) else f"{value}{unit}"

    def ratio(r: dict[str, Any], key: str) -> str:
        return f"{show(r[key])} ({', '.join(f'{v:g}' for v in r[key + 's']) or 'n/a'})"

    before = any("before_cases" in r for r in rows)
    lines = [
        "| protocol | --max-examples | cases (suite / CLI) | cases/s (suite / CLI) | suite / CLI cases/s: median "
        "(rounds) | cases per CPU s (suite / CLI) | suite / CLI per CPU s: median (rounds) | "
        "whole phase, targeted cases added: suite / CLI cases/s (rounds) | "
        + ("before / CLI cases/s (rounds) | before / CLI per CPU s (rounds) | " if before else "")
        + "engine CPU s (suite / CLI) | process wall s (suite / CLI) | process CPU s (suite / CLI) | mock CPU s "
        "(suite / CLI) | scenario ms per requirement (count) | other load |",
        "|---|---:|---|---|---|---|---|---|" + ("---|---|" if before else "") + "---|---|---|---|---|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r['protocol']} | {r['max_examples']} | {show(r['suite_cases'])} / {show(r['cli_cases'])} | "
            f"{show(r['suite_cases_per_s'])} / {show(r['cli_cases_per_s'])} | {ratio(r, 'cases_per_s_ratio')} | "
            f"{show(r['suite_cases_per_cpu_s'])} / {show(r['cli_cases_per_cpu_s'])} | "
            f"{ratio(r, 'cases_per_cpu_s_ratio')} | "
            f"{ratio(r, 'phase_cases_per_s_ratio')} ({show(r['suite_targeted_cases'])} targeted) | "
            + (
                f"{ratio(r, 'before_cases_per_s_ratio')} | {ratio(r, 'before_cases_per_cpu_s_ratio')} | "
                if before
                else ""
            )
            + f"{show(r['suite_engine_cpu_s'])} / {show(r['cli_engine_cpu_s'])} | {show(r['suite_wall_s'])} / "
            f"{show(r['cli_wall_s'])} | {show(r['suite_cpu_s'])} / {show(r['cli_cpu_s'])} | "
            f"{show(r['suite_mock_cpu_s'])} / {show(r['cli_mock_cpu_s'])} | "
            f"{show(r['scenario_per_requirement_ms'])} ({show(r['scenario_requirements'])}) | "
            f"{r['other_load_cores']:.2f} cores |"
        )
    return "\n".join(lines) + "\n"


PHASES = ("preflight", "schema", "model", "scenario")


def _tree_name(tree: Path) -> str:
    """How results name a tree: no machine paths in the recorded files."""
    return "this checkout" if tree == ROOT else tree.name


def _commit(tree: Path) -> str:
    """The tree's commit, or its folder's name when it is not a git checkout (an exported copy)."""
    done = subprocess.run(
        ["git", "-C", str(tree), "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=False
    )
    return done.stdout.strip() if done.returncode == 0 else tree.name


def default_all(tree: Path, folder: Path, timeout: float) -> dict[str, Any]:
    """The default ``conformance run --protocol all`` against the embedded mock, run from ``tree``
    (this checkout, or another one for a before/after pair): wall and CPU seconds (the run's
    process and its children, its workers included), the other load meanwhile, and from its events
    file each protocol's phase seconds; when the protocols ran one after another, what is left of
    the wall is start-up (imports, loading the documents) and exit (None when they overlapped)."""
    events = folder / "events.jsonl"
    command = [PYTHON, "-m", "conformance", "run", "--protocol", "all", "--report-dir", str(folder / "reports")]
    command += ["-q", "--events", str(events)]
    ran = run_from(tree, command, timeout)
    if ran.done is None:
        return {"tree": _tree_name(tree), "error": f"timed out after {timeout:g} s"}
    done, wall = ran.done, ran.wall_s
    row: dict[str, Any] = {
        "tree": _tree_name(tree),
        "commit": _commit(tree),
        "exit_code": done.returncode,
        "wall_s": round(wall, 2),
        "cpu_s": ran.cpu_s,
        "other_load_cores": ran.other_load_cores,
        "summary_line": [line.split("; reports in ")[0] for line in done.stdout.strip().splitlines()],
    }
    if not events.exists():
        row["error"] = (done.stderr.strip() or done.stdout.strip())[-600:] or "no events file"
        return row
    protocols: dict[str, dict[str, Any]] = {}
    current: dict[str, Any] = {}
    for line in events.read_text().splitlines():
        event = json.loads(line)
        kind = event.get("event")
        if kind == "run_started":
            current = protocols.setdefault(event["protocol"], dict.fromkeys(PHASES, 0.0))
        elif kind == "phase_finished":
            current[event["phase"]] = round(current.get(event["phase"], 0.0) + float(event["duration_s"]), 2)
        elif kind == "run_finished":
            stats = event.get("stats") or {}
            current["run_s"] = round(float(event["duration_s"]), 2)
            current["schema_cases"] = stats.get("schema_cases")
            current["model_sequences"] = stats.get("model_sequences")
            current["model_requests"] = stats.get("model_requests")
            current["verdicts"] = event.get("summary")
    row["protocols"] = protocols
    rest = wall - sum(p.get("run_s", 0.0) for p in protocols.values())
    row["start_up_and_exit_s"] = round(rest, 2) if rest >= 0 else None  # below 0: the runs overlapped
    return row


def default_all_rounds(trees: list[Path], rounds: int, tmp: Path, timeout: float) -> list[dict[str, Any]]:
    """``rounds`` of ``default_all`` for each tree, the trees alternated (and the order rotated per
    round), so a neighbour's load falls on both sides alike."""
    rows = []
    for n in range(rounds):
        order = trees[n % len(trees) :] + trees[: n % len(trees)]
        for tree in order:
            row = default_all(tree, tmp / f"all-{n}-{trees.index(tree)}", timeout)
            row["round"] = n + 1
            rows.append(row)
            phases = ", ".join(
                f"{pid} " + "/".join(f"{p.get(ph, 0.0):g}" for ph in ("schema", "model", "scenario"))
                for pid, p in row.get("protocols", {}).items()
            )
            print(
                f"  round {n + 1} {row.get('commit', tree)}: wall {row.get('wall_s')} s, CPU {row.get('cpu_s')} s, "
                f"other load {row.get('other_load_cores')} cores, exit {row.get('exit_code')}; "
                f"schema/model/scenario s: {phases}{'  ERROR ' + row['error'][:200] if 'error' in row else ''}",
                flush=True,
            )
    return rows


def _seconds(value: float | None) -> str:
    return "overlapped" if value is None else f"{value:.1f}"


def default_all_table(rows: list[dict[str, Any]]) -> str:
    lines = [
        "| round | commit | wall s | CPU s | other load | start-up + exit s | "
        + " | ".join(f"{pid}: schema / model / scenario s" for pid in sorted(PROTOCOLS))
        + " | MUST passed | target |",
        "|---:|---|---:|---:|---:|---:|" + "---|" * len(PROTOCOLS) + "---|---|",
    ]
    for r in rows:
        if "error" in r:
            lines.append(
                f"| {r.get('round')} | {r.get('commit', '')} | {r.get('wall_s', '')} | | | | error: {r['error'][:80]} |"
            )
            continue
        cells = []
        for pid in sorted(PROTOCOLS):
            p = r["protocols"].get(pid, {})
            cells.append(" / ".join(f"{p.get(ph, 0.0):.1f}" for ph in ("schema", "model", "scenario")))
        must = sum(((p.get("verdicts") or {}).get("must") or {}).get("passed", 0) for p in r["protocols"].values())
        met = "met" if r["wall_s"] < TARGET_SECONDS and r["exit_code"] == 0 else "MISSED"
        lines.append(
            f"| {r['round']} | {r['commit']} | {r['wall_s']:.1f} | {r['cpu_s']:.1f} | "
            f"{r['other_load_cores']:.2f} cores | {_seconds(r['start_up_and_exit_s'])} | {' | '.join(cells)} | "
            f"{must} (exit {r['exit_code']}) | < {TARGET_SECONDS:g} s: **{met}** |"
        )
    return "\n".join(lines) + "\n"


WITHOUT_MODEL = ("--phase", "schema", "--phase", "scenario")


def model_share(protocols: list[str], tmp: Path, timeout: float, rounds: int) -> list[dict[str, Any]]:
    """The default run with and without the model-based phase, alternated ``rounds`` times side by
    side, so a loaded machine slows both alike: the ratio is the phase's cost."""
    rows = []
    for protocol in protocols:
        with_model, without = [], []
        for n in range(rounds):
            with_model.append(run_suite(protocol, None, tmp / f"m{n}-{protocol}", timeout)["wall_s"])
            without.append(run_suite(protocol, None, tmp / f"n{n}-{protocol}", timeout, WITHOUT_MODEL)["wall_s"])
        stats = json.loads((tmp / f"m0-{protocol}" / "results.json").read_text()).get("stats", {})
        rows.append(
            {
                "protocol": protocol,
                "with_model_s": with_model,
                "without_model_s": without,
                "ratio": round(sum(with_model) / sum(without), 3),
                "model_seconds": stats.get("model_seconds"),
                "model_requests": stats.get("model_requests"),
            }
        )
    return rows


def _settings(args: argparse.Namespace) -> dict[str, Any]:
    return {**vars(args), "versus": [_tree_name(tree) for tree in args.versus]}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--protocol", action="append", choices=sorted(PROTOCOLS), help="default: all four")
    parser.add_argument("--max-examples", type=int, default=50, help="the larger profile (default 50)")
    parser.add_argument("--timeout", type=float, default=600.0, help="bound on one run, seconds (default 600)")
    parser.add_argument("--no-scaling", action="store_true", help="skip the 2-worker comparison")
    parser.add_argument("--xdist", action="store_true", help="also compare the pytest plugin at -n 0 and -n 2")
    parser.add_argument("--xdist-only", action="store_true", help="only that comparison")
    parser.add_argument("--xdist-examples", type=int, default=DEFAULT_EXAMPLES, help="its --conformance-max-examples")
    parser.add_argument("--cli", action="store_true", help="also run the schema phase against the schemathesis CLI")
    parser.add_argument("--cli-only", action="store_true", help="only that comparison")
    parser.add_argument("--cli-examples", type=int, default=DEFAULT_EXAMPLES, help="its --max-examples")
    parser.add_argument("--no-scenario", action="store_true", help="that comparison without the scenario phase")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of that comparison (median kept)")
    parser.add_argument("--output", default="suite_throughput", help="results file stem under bench/results/")
    parser.add_argument("--quiet-wait", type=float, default=180.0, help="wait up to this long for an idle machine")
    parser.add_argument(
        "--model-share",
        type=int,
        metavar="ROUNDS",
        help="only measure the model-based phase's share of each default run, ROUNDS times",
    )
    parser.add_argument(
        "--default-all",
        type=int,
        metavar="ROUNDS",
        help="only the default `conformance run --protocol all`, ROUNDS times (with --versus: each tree in turn)",
    )
    parser.add_argument(
        "--versus",
        type=Path,
        action="append",
        default=[],
        metavar="TREE",
        help="another checkout of the project run alternately with this one by --default-all and --cli (before/after)",
    )
    args = parser.parse_args(argv)
    protocols = args.protocol or sorted(PROTOCOLS)
    facts = machine()
    facts["before_start"] = wait_quiet(args.quiet_wait)
    if args.default_all:
        trees = [ROOT, *(tree.resolve() for tree in args.versus)]
        print(
            f"default `conformance run --protocol all`, {args.default_all} round(s) of {len(trees)} tree(s)", flush=True
        )
        with tempfile.TemporaryDirectory(prefix="bench-all-") as tmp_name:
            all_rows = default_all_rounds(trees, args.default_all, Path(tmp_name), args.timeout * len(PROTOCOLS))
        text = default_all_table(all_rows)
        print("\n" + text)
        write_json(f"{args.output}_default_all.json", {"machine": facts, "settings": _settings(args), "runs": all_rows})
        write_table(f"{args.output}_default_all.md", "The default run of all four protocols", text, facts)
        return 0
    if args.model_share:
        with tempfile.TemporaryDirectory(prefix="bench-model-") as tmp_name:
            share = model_share(protocols, Path(tmp_name), args.timeout, args.model_share)
        lines = [
            "| protocol | default run, s | without the model phase, s | ratio | model phase, s (requests) |",
            "|---|---|---|---|---|",
        ]
        lines += [
            f"| {r['protocol']} | {', '.join(map(str, r['with_model_s']))} | "
            f"{', '.join(map(str, r['without_model_s']))} | {r['ratio']} | {r['model_seconds']} "
            f"({r['model_requests']}) |"
            for r in share
        ]
        text = "\n".join(lines) + "\n"
        print("\n" + text)
        write_json("model_share.json", {"machine": facts, "settings": _settings(args), "runs": share})
        (RESULTS / "model_share.md").write_text(f"# The model-based phase's share ({facts['date']})\n\n" + text)
        return 0
    rows: list[dict[str, Any]] = []
    scale = xdist = None
    versus: list[dict[str, Any]] | None = None
    with tempfile.TemporaryDirectory(prefix="bench-suite-") as tmp_name:
        tmp = Path(tmp_name)
        if args.cli or args.cli_only:
            print(
                f"schema phase vs the schemathesis CLI, --max-examples {args.cli_examples}, {args.rounds} rounds",
                flush=True,
            )
            before = args.versus[0].resolve() if args.versus else None
            versus = against_cli(
                protocols, args.cli_examples, args.rounds, tmp, args.timeout, before, not args.no_scenario
            )
        if args.cli_only:
            assert versus is not None
            text = against_table(versus)
            print("\n" + text)
            write_json(f"{args.output}_cli.json", {"machine": facts, "settings": _settings(args), "rows": versus})
            write_table(f"{args.output}_cli.md", "Schema phase vs the schemathesis CLI", text, facts)
            return 0
        if args.xdist or args.xdist_only:
            xdist = xdist_scaling(protocols, args.xdist_examples, tmp, args.timeout * len(protocols))
        if args.xdist_only:
            assert xdist is not None
            text = xdist_table(xdist)
            print("\n" + text)
            write_json(f"{args.output}_xdist.json", {"machine": facts, "settings": _settings(args), "xdist": xdist})
            (RESULTS / f"{args.output}_xdist.md").write_text(f"# pytest plugin under xdist ({facts['date']})\n\n{text}")
            return 0
        for protocol in protocols:
            rows.append(timed(protocol, None, tmp, args.timeout))
            rows.append(timed(protocol, args.max_examples, tmp, args.timeout))
        scale = None if args.no_scaling else scaling(protocols, tmp, args.timeout)
    text = (
        table(rows, scale)
        + ("\n" + xdist_table(xdist) if xdist else "")
        + ("\n" + against_table(versus) if versus else "")
    )
    print("\n" + text)
    write_json(
        f"{args.output}.json",
        {
            "machine": facts,
            "settings": _settings(args),
            "runs": rows,
            "scaling": scale,
            "xdist": xdist,
            "against_cli": versus,
        },
    )
    (RESULTS / f"{args.output}.md").write_text(f"# Suite throughput ({facts['date']})\n\n" + text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
