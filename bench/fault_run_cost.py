"""CPU of the test session's fault runs (tests/faultruns.py) as the kit makes them and with one of
its savings undone, back to back.

Each mode makes the same runs one after another in one fresh process, as a process making runs
ahead does (``tests.faultruns.make``), or each in a process of its own (``--per-process``, as the
``conformance`` command makes a run): a protocol's clean run, then a sample of its catalogue
faults (``--per-protocol``, drawn with ``--seed``) and the faults named with ``--fault``. It reports
each run's CPU seconds (the process's, the embedded mock's thread included), the process's whole
CPU, and whether the two modes reached the same verdicts (every requirement not passed, with its
status). ``unbounded`` is the model phase shrinking each failure as long as Hypothesis does (the
kit before the budget of ``conformance/phases/model/engine.shrink_budget``, which ``phase.py`` hands the
engine); ``unsettled`` is each run with the collector's defaults (the kit before ``specs/heap.settle``,
which ``conformance/engine/runner.run`` calls once its plan is built)."""

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
import specs.heap
from tests.faultruns import make
if sys.argv[3] == "unbounded":
    phase.shrink_budget = lambda sequences: None
if sys.argv[3] == "unsettled":
    specs.heap.settle = lambda: None
for key in json.loads(sys.argv[2]):
    started = time.process_time()
    make(sys.argv[1], key, True)
    report = json.loads(Path(sys.argv[1], key + ".json").read_text())["report"]
    verdicts = sorted(f"{r['id']} {r['status']}" for r in report["requirements"] if r["status"] != "passed")
    print(json.dumps({"key": key, "cpu_s": round(time.process_time() - started, 2), "verdicts": verdicts}), flush=True)
"""
MODES = ("today", "unbounded", "unsettled")
"""The kit as it is, first: each other mode is read against it."""


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


def measure(keys: list[str], mode: str, per_process: bool) -> dict[str, Any]:
    env = {"PYTHONHASHSEED": "0", "PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}
    before, started = cpu_children(), time.monotonic()
    runs = []
    with tempfile.TemporaryDirectory(prefix="fault-runs-") as root:
        for batch in [[key] for key in keys] if per_process else [keys]:
            out = subprocess.run(
                [sys.executable, "-c", CHILD, root, json.dumps(batch), mode],
                env=env,
                cwd=ROOT,
                capture_output=True,
                text=True,
                check=True,
            )
            runs += [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]
    return {"cpu_s": round(cpu_children() - before, 1), "wall_s": round(time.monotonic() - started, 1), "runs": runs}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--per-protocol", type=int, default=10, help="catalogue faults drawn per protocol")
    parser.add_argument("--seed", type=int, default=0, help="the draw's seed")
    parser.add_argument("--fault", action="append", default=[], help="a fault always measured (repeatable)")
    parser.add_argument(
        "--mode", action="append", choices=MODES[1:], default=[], help="a saving undone (repeatable; default: each)"
    )
    parser.add_argument(
        "--per-process",
        action="store_true",
        help="each run in a fresh process of its own, as the command makes one (whole process: imports included)",
    )
    parser.add_argument("--output", default="fault_run_cost", help="results/<output>.json and .md")
    args = parser.parse_args()
    keys = sample(args.per_protocol, args.seed, args.fault)
    args.mode = args.mode or list(MODES[1:])
    chosen = ["today", *(m for m in MODES[1:] if m in args.mode)]
    modes = {mode: measure(keys, mode, args.per_process) for mode in chosen}
    by_key = {mode: {r["key"]: r for r in data["runs"]} for mode, data in modes.items()}
    rows = [
        "| run | " + " | ".join(f"{m} CPU s" for m in chosen) + " | same verdicts |",
        "|---|" + "---:|" * len(chosen) + "---|",
    ]
    for key in keys:
        each = [by_key[mode][key] for mode in chosen]
        same = "yes" if all(r["verdicts"] == each[0]["verdicts"] for r in each) else "NO"
        rows.append(f"| {key} | " + " | ".join(f"{r['cpu_s']:.2f}" for r in each) + f" | {same} |")
    total = {mode: modes[mode]["cpu_s"] for mode in chosen}
    ratios = ", ".join(f"today/{m} {total['today'] / total[m]:.2f}" for m in chosen[1:])
    rows.append(
        f"| **{len(keys)} runs, whole process** | " + " | ".join(f"**{total[m]}**" for m in chosen) + f" | {ratios} |"
    )
    text = "\n".join(rows)
    print(text)
    facts = machine()
    write_json(f"{args.output}.json", {"machine": facts, "settings": vars(args), "keys": keys, "modes": modes})
    write_table(f"{args.output}.md", "Fault runs' CPU, the kit as it is against each saving undone", text, facts)


if __name__ == "__main__":
    main()
