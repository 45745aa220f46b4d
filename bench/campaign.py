"""A campaign spread over processes, side by side with one process: ``--shard`` over 2 runners
(then ``conformance merge``) against one ``conformance run``, and the pytest plugin at ``-n 2``
against ``-n 0``, on the same depth, seed and protocol, in one run of this script.

"cases" are the property-based phase's generated cases (results.json ``stats.schema_cases``, the
same in every mode); cases/s is that over the wall time from the first process's start to the last
one's end (start-up, imports, the model-based phase, the scenarios and the merge included). Each
runner tests its own embedded mock, as each job of a CI matrix does. Every mode must reach the
same verdicts, or the row says so. The suite's byte code is compiled first, as an installed
package's is: where PYTHONDONTWRITEBYTECODE is set, an editable checkout would otherwise compile
the modules a change touched again in every process, a cost each added process pays once more.

    python bench/campaign.py [--protocol agent-protocol] [--depth deep] [--rounds 1] [--output NAME]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _common import PYTHON, ROOT, LoadMeter, machine, wait_quiet, write_json, write_table

PACKAGES = ("conformance", "mockserver", "specs")


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONHASHSEED": "0", "PYTHONPATH": str(ROOT)}


def _timed(commands: list[list[str]], cwd: Path, settle: float = 0.0) -> tuple[float, list[int], float, list[float]]:
    """Run the commands at once, after waiting (at most ``settle`` seconds) for a quiet machine;
    (wall seconds, exit codes, other load in cores, CPU seconds of each command with the processes
    it waited for)."""
    if settle:
        wait_quiet(settle)
    with LoadMeter() as load:
        started = time.monotonic()
        procs = [
            subprocess.Popen(c, cwd=cwd, env=_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            for c in commands
        ]
        codes, cpu = [], []
        for proc in procs:
            _, status, usage = os.wait4(proc.pid, 0)
            proc.returncode = os.waitstatus_to_exitcode(status)
            codes.append(proc.returncode)
            cpu.append(round(usage.ru_utime + usage.ru_stime, 1))
        wall = time.monotonic() - started
    return wall, codes, load.other_cores, cpu


def _facts(report: Path) -> tuple[int, dict[str, str]]:
    """The generated cases of the property-based phase (the unit of a campaign's size: the same in
    every mode, the work being dealt, not redrawn) and the verdicts. The model-based phase's calls
    are not counted: how many reads a sequence makes grows with what its runner's target holds
    (every list is walked whole), so two shards make fewer reads for the same sequences."""
    data: dict[str, Any] = json.loads((report / "results.json").read_text(encoding="utf-8"))
    return int(data["stats"].get("schema_cases") or 0), {r["id"]: r["status"] for r in data["requirements"]}


def one_round(protocol: str, depth: str, work: Path, settle: float = 0.0) -> dict[str, Any]:
    run = [PYTHON, "-m", "conformance", "run", "--protocol", protocol, "--depth", depth, "-q"]
    out: dict[str, Any] = {}

    wall, codes, other, cpu = _timed([[*run, "--report-dir", "single"]], work, settle)
    cases, verdicts = _facts(work / "single")
    out["single"] = {"wall_s": round(wall, 1), "cases": cases, "exit": codes, "other_load_cores": other, "cpu_s": cpu}

    shards = [[*run, "--shard", f"{k}/2", "--report-dir", f"shard{k}"] for k in (1, 2)]
    wall, codes, other, cpu = _timed(shards, work, settle)
    merge_wall, merge_codes, _, merge_cpu = _timed(
        [[PYTHON, "-m", "conformance", "merge", "shard1", "shard2", "-o", "merged"]], work
    )
    cases2, verdicts2 = _facts(work / "merged")
    out["shards"] = {
        "wall_s": round(wall + merge_wall, 1),
        "cases": cases2,
        "exit": codes + merge_codes,
        "other_load_cores": other,
        "same_verdicts": verdicts2 == verdicts,
        "cpu_s": cpu + merge_cpu,
    }

    for n in ("0", "2"):
        reports = work / f"pytest-{n}"
        command = [
            PYTHON,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-n",
            n,
            "--conformance-protocol",
            protocol,
            "--conformance-depth",
            depth,
            "--conformance-report-dir",
            str(reports),
        ]
        wall, codes, other, cpu = _timed([command], work, settle)
        cases_n, verdicts_n = _facts(reports)
        out[f"pytest_n{n}"] = {
            "wall_s": round(wall, 1),
            "cases": cases_n,
            "exit": codes,
            "other_load_cores": other,
            "same_verdicts": verdicts_n == verdicts,
            "cpu_s": cpu,
        }
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--protocol", default="agent-protocol")
    parser.add_argument("--depth", default="deep")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument(
        "--quiet-wait", type=float, default=60.0, help="seconds to wait (at most) for an idle machine before each mode"
    )
    parser.add_argument("--output", default="campaign", help="results/<output>.json and .md")
    args = parser.parse_args()
    subprocess.run([PYTHON, "-m", "compileall", "-q", *(str(ROOT / p) for p in PACKAGES)], check=True)
    rounds = []
    for n in range(args.rounds):
        with tempfile.TemporaryDirectory(prefix="campaign-bench-") as tmp:
            rounds.append(one_round(args.protocol, args.depth, Path(tmp), args.quiet_wait))
        print(f"round {n + 1}: {json.dumps(rounds[-1])}", file=sys.stderr, flush=True)
    facts = {**machine(), "protocol": args.protocol, "depth": args.depth, "quiet_wait_s": args.quiet_wait}
    write_json(f"{args.output}.json", {"facts": facts, "rounds": rounds})
    lines = [
        "| round | mode | wall s | cases | cases/s | ratio to one process | same verdicts | CPU s per process "
        "(with what it waited for) | other load (cores) |",
        "|---:|---|---:|---:|---:|---:|---|---|---:|",
    ]
    for n, r in enumerate(rounds, 1):
        base = r["single"]["cases"] / r["single"]["wall_s"]
        pytest_base = r["pytest_n0"]["cases"] / r["pytest_n0"]["wall_s"]
        for mode, label, ref in (
            ("single", "conformance run, one process", base),
            ("shards", "--shard 1/2 and 2/2 at once, then merge", base),
            ("pytest_n0", "pytest -n 0", pytest_base),
            ("pytest_n2", "pytest -n 2", pytest_base),
        ):
            row = r[mode]
            rate = row["cases"] / row["wall_s"]
            same = "yes" if row.get("same_verdicts", True) else "**no**"
            lines.append(
                f"| {n} | {label} | {row['wall_s']} | {row['cases']:,} | {rate:.1f} | {rate / ref:.2f}x | {same} "
                f"| {' + '.join(map(str, row['cpu_s']))} | {row['other_load_cores']} |"
            )
    for n, r in enumerate(rounds, 1):
        # what two free cores would give: the heavier shard, then the merge, on the critical path
        single, (*shards, merge) = r["single"]["cpu_s"][0], r["shards"]["cpu_s"]
        path = max(shards) + merge
        ratio = (r["shards"]["cases"] / path) / (r["single"]["cases"] / single)
        lines.append(
            f"\nround {n}, CPU critical path: one process {single} s; shards {max(shards)} s + merge {merge} s = "
            f"{path:.1f} s, so {ratio:.2f}x the cases per CPU second of the critical path (two free cores)"
        )
    table = "\n".join(lines) + "\n"
    title = f"A {args.depth} campaign of {args.protocol} over processes"
    write_table(f"{args.output}.md", title, table, {"date": facts["date"]})
    print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
