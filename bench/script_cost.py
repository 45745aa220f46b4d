"""What a finding's reproduction script costs to write and to run (``conformance/check/script.py``),
side by side.

For a protocol's catalogue faults, each fault's run of its own requirements is made once (this
checkout's suite against this checkout's mock); every finding with two calls or more is written as
its ``sh`` script by this checkout's generator and by each ``--versus`` tree's (an export of an
earlier commit), and each script is run against a fresh mock with its fault, the trees alternated
per round. Recorded per tree: the CPU seconds of writing them (reading each finding's calls: which
state they depend on, what they can tell, ``Reproduction.of``, ``undecidable`` and ``script``, in a
process of the tree's own, less its start), the scripts' CPU seconds (their processes: sh, curl, sed, awk...),
wall seconds, the processes they started (with ``--execs``: ``strace`` counts each ``execve``),
and whether every script gave the exit status (reproduced, not, inconclusive) the other trees' did.

    python bench/script_cost.py [--protocol P] [--faults N] [--rounds N] [--versus TREE ...] [--execs]
                                [--write-only]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import PYTHON, ROOT, machine, write_json, write_table
from suite_throughput import _tree_name

GENERATE = """
import json, sys, time
from conformance.check.script import script, undecidable
from conformance.verdicts.reproduction import Reproduction
from conformance.verdicts.results import RunResult
items = json.load(open(sys.argv[1]))
reports = {}
for item in items:
    reports.setdefault(item["fault"], RunResult.from_dict(item["report"]))
started, out = time.process_time(), []
for item in items:
    result = reports[item["fault"]]
    finding = next(f for r in result.results for f in r.findings if f.key == item["key"])
    rep = Reproduction.of(finding, item["state"])
    out.append([script(rep, finding.key, result.base_url), undecidable(rep)])
json.dump({"scripts": out, "cpu_s": time.process_time() - started}, open(sys.argv[2], "w"))
"""
"""Run in each tree (its own ``conformance`` on the path): the scripts of the findings given, and
whether each can tell, with the CPU seconds of writing them (the reports read before)."""


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def findings(protocol: str, limit: int | None) -> list[dict[str, Any]]:
    """Each finding with earlier calls of the protocol's faults' own runs, with its fault and run."""
    from conformance.selfcheck.catalogue import run_fault
    from conformance.verdicts.reproduction import Reproduction
    from conformance.verdicts.results import RunResult
    from mockserver import catalogue

    faults = sorted(n for n, f in catalogue().items() if f.protocol == protocol and f.breaks)[:limit]
    out = []
    for name in faults:
        result: RunResult = run_fault(catalogue()[name], exact=False)
        report = result.to_dict()
        for res in result.results:
            for finding in res.findings:
                state = bool(res.requirement.depends_on_state)
                if len(finding.evidence) >= 2 and not Reproduction.of(finding, state).baked:
                    out.append({"fault": name, "key": finding.key, "state": state, "report": report})
    return out


def generated(tree: Path, items: list[dict[str, Any]], folder: Path, n: int) -> tuple[list[str], list[bool], float]:
    """The tree's scripts, whether each can tell, and the CPU seconds writing them took."""
    given, scripts = folder / "findings.json", folder / f"scripts-{n}.json"
    given.write_text(json.dumps(items))
    env = {**os.environ, "PYTHONPATH": str(tree)}
    subprocess.run([PYTHON, "-c", GENERATE, str(given), str(scripts)], cwd=tree, env=env, check=True)
    written = json.loads(scripts.read_text())
    return [s for s, _ in written["scripts"]], [u for _, u in written["scripts"]], written["cpu_s"]


def run_scripts(
    protocol: str, items: list[dict[str, Any]], scripts: list[str], folder: Path, execs: bool
) -> dict[str, Any]:
    from conformance.engine.runner import EMBEDDED_TOKENS
    from conformance.verdicts.reproduction import CREDENTIALS
    from mockserver import EmbeddedServer, MockConfig
    from specs.documents import load

    env = {**os.environ, "MAX_TIME": "10", **dict(zip(CREDENTIALS, EMBEDDED_TOKENS, strict=True))}
    base_path = load(protocol).info.base_path
    codes, started, wall, cpu = [], 0, 0.0, 0.0
    for n, (item, text) in enumerate(zip(items, scripts, strict=True)):
        path = folder / f"{n}.sh"
        path.write_text(text)
        trace = folder / f"{n}.trace"
        prefix = ["strace", "-f", "-qq", "-e", "trace=execve", "-e", "signal=none", "-o", str(trace)] if execs else []
        with EmbeddedServer(MockConfig(protocols=(protocol,), faults=(item["fault"],))) as mock:
            before, at = _children_cpu(), time.monotonic()
            done = subprocess.run(
                [*prefix, "sh", str(path), mock.url + base_path], env=env, cwd=folder, timeout=120, capture_output=True
            )
            wall += time.monotonic() - at
            cpu += _children_cpu() - before
        codes.append(done.returncode)
        if execs:
            started += sum(1 for line in trace.read_text().splitlines() if "execve(" in line and "= 0" in line)
    return {"codes": codes, "wall_s": wall, "cpu_s": cpu, "execs": started if execs else None}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--protocol", default="agent-protocol")
    parser.add_argument("--faults", type=int, default=None, help="the first N faults (all by default)")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--versus", type=Path, action="append", default=[], help="an earlier tree to run beside")
    parser.add_argument("--execs", action="store_true", help="count the processes started (strace)")
    parser.add_argument("--write-only", action="store_true", help="write the scripts, do not run them")
    parser.add_argument("--output", default="script_cost")
    args = parser.parse_args(argv)
    if args.execs and shutil.which("strace") is None:
        parser.error("--execs needs strace")
    trees = [ROOT, *(tree.resolve() for tree in args.versus)]
    facts = machine()
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="script-cost-") as tmp:
        folder = Path(tmp)
        items = findings(args.protocol, args.faults)
        for n in range(args.rounds):
            for k, tree in enumerate(trees[n % len(trees) :] + trees[: n % len(trees)]):
                scripts, telling, writing = generated(tree, items, folder, k)
                ran = (
                    {"codes": [], "wall_s": 0.0, "cpu_s": 0.0, "execs": None}
                    if args.write_only
                    else run_scripts(args.protocol, items, scripts, folder, args.execs and n == 0)
                )
                digest = hashlib.sha256(json.dumps([scripts, telling]).encode()).hexdigest()[:16]
                row = {"round": n + 1, "tree": _tree_name(tree), "scripts": len(items), "write_cpu_s": writing}
                row |= {"written": digest, **ran}
                rows.append(row)
                print(json.dumps({k: v for k, v in row.items() if k != "codes"}), flush=True)
    first = {r["tree"]: r["codes"] for r in rows}
    same = all(codes == next(iter(first.values())) for codes in first.values())
    written = {r["written"] for r in rows}
    base = [r for r in rows if r["tree"] == _tree_name(ROOT)]
    lines = [
        "| round | tree | scripts | writing CPU s | vs this checkout | running CPU s | wall s | processes"
        " | vs this checkout |",
        "|---:|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        mine = next(b for b in base if b["round"] == r["round"])
        started = "" if r["execs"] is None else str(r["execs"])
        running = f"{r['cpu_s'] / mine['cpu_s']:.2f}" if mine["cpu_s"] else ""
        lines.append(
            f"| {r['round']} | {r['tree']} | {r['scripts']} | {r['write_cpu_s']:.2f} | "
            f"{r['write_cpu_s'] / mine['write_cpu_s']:.2f} | {r['cpu_s']:.1f} | {r['wall_s']:.1f} | {started} | "
            f"{running} |"
        )
    alike = "yes" if len(written) == 1 else "**no**"
    lines.append(f"\nEvery tree wrote the same scripts (and said the same of what each can tell): {alike}.")
    if not args.write_only:
        lines.append(f"Every script gave the same exit status in every tree: {'yes' if same else '**no**'}.")
    text = "\n".join(lines) + "\n"
    settings = {**vars(args), "versus": [_tree_name(t) for t in trees[1:]]}
    write_json(f"{args.output}.json", {"machine": facts, "settings": settings, "rows": rows})
    write_table(f"{args.output}.md", "What the reproduction scripts cost to write and to run", text, facts)
    print(text)
    return 0 if same and len(written) == 1 else 1


if __name__ == "__main__":
    raise SystemExit(main())
