"""CPU of the test session's fault runs (tests/faultruns.py), with the model phase's shrink budget
and without it, back to back.

Each mode makes the same runs one after another in one fresh process, as a process making runs
ahead does (``tests.faultruns.make``): a protocol's clean run, then a sample of its catalogue
faults (``--per-protocol``, drawn with ``--seed``) and the faults named with ``--fault``. It reports
each run's CPU seconds (the process's, the embedded mock's thread included), the process's whole
CPU, and whether the two modes reached the same verdicts (every requirement not passed, with its
status). ``unbounded`` is the model phase shrinking each failure as long as Hypothesis does (the
kit before the budget of ``conformance/phases/model/engine.shrink_budget``, which ``phase.py`` hands the
engine)."""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
import time
from typing import Any

from _common import ROOT, cpu_children, machine, write_json, write_table

CHILD = """
import json, sys, time
from pathlib import Path
import conformance.phases.model.phase as phase
from tests.faultruns import make
if sys.argv[3] == "unbounded":
    phase.shrink_budget = lambda sequences: None
for key in json.loads(sys.argv[2]):
    started = time.process_time()
    make(sys.argv[1], key, True)
    report = json.loads(Path(sys.argv[1], key + ".json").read_text())["report"]
    verdicts = sorted(f"{r['id']} {r['status']}" for r in report["requirements"] if r["status"] != "passed")
    print(json.dumps({"key": key, "cpu_s": round(time.process_time() - started, 2), "verdicts": verdicts}), flush=True)
"""
MODES = ("bounded", "unbounded")


def sample(per_protocol: int, seed: int, named: list[str]) -> list[str]:
    sys.path.insert(0, str(ROOT))
    from mockserver import catalogue

    by: dict[str, list[str]] = {}
    for name, fault in sorted(catalogue().items()):
        by.setdefault(fault.protocol, []).append(name)
    draw = random.Random(seed)
    keys = []
    for protocol, names in sorted(by.items()):
        chosen = draw.sample(names, min(per_protocol, len(names)))
        keys += [f"clean.{protocol}", *sorted({*chosen, *(n for n in named if n in names)})]
    return keys


def measure(keys: list[str], mode: str) -> dict[str, Any]:
    env = {"PYTHONHASHSEED": "0", "PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}
    before, started = cpu_children(), time.monotonic()
    with tempfile.TemporaryDirectory(prefix="fault-runs-") as root:
        out = subprocess.run(
            [sys.executable, "-c", CHILD, root, json.dumps(keys), mode],
            env=env,
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        )
    runs = [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]
    return {"cpu_s": round(cpu_children() - before, 1), "wall_s": round(time.monotonic() - started, 1), "runs": runs}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--per-protocol", type=int, default=10, help="catalogue faults drawn per protocol")
    parser.add_argument("--seed", type=int, default=0, help="the draw's seed")
    parser.add_argument("--fault", action="append", default=[], help="a fault always measured (repeatable)")
    parser.add_argument("--output", default="fault_run_cost", help="results/<output>.json and .md")
    args = parser.parse_args()
    keys = sample(args.per_protocol, args.seed, args.fault)
    modes = {mode: measure(keys, mode) for mode in MODES}
    by_key = {mode: {r["key"]: r for r in data["runs"]} for mode, data in modes.items()}
    rows = ["| run | bounded CPU s | unbounded CPU s | same verdicts |", "|---|---:|---:|---|"]
    for key in keys:
        one, other = (by_key[mode][key] for mode in MODES)
        same = "yes" if one["verdicts"] == other["verdicts"] else "NO"
        rows.append(f"| {key} | {one['cpu_s']:.2f} | {other['cpu_s']:.2f} | {same} |")
    total = {mode: modes[mode]["cpu_s"] for mode in MODES}
    rows.append(
        f"| **{len(keys)} runs, whole process** | **{total['bounded']}** | **{total['unbounded']}** | "
        f"ratio {total['bounded'] / total['unbounded']:.2f} |"
    )
    text = "\n".join(rows)
    print(text)
    facts = machine()
    write_json(f"{args.output}.json", {"machine": facts, "settings": vars(args), "keys": keys, "modes": modes})
    write_table(f"{args.output}.md", "Fault runs' CPU, the model phase's shrink budget against none", text, facts)


if __name__ == "__main__":
    main()
