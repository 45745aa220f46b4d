"""A run against a target whose streams stall after their first events (issue 29), side by side.

For each fault (``sgr-stall-mid-stream``: SGR Agent Core's chat streams stop after two chunks and
never end; ``ns-stream-stall``: NeuroSan's streaming_chat sends one frame, then holds the
connection open), the reference mock from this checkout serves the protocol with the fault on a
loopback port, and ``conformance run --protocol P --base-url URL`` runs against it with the default
timeout and settings, from this checkout and from each ``--versus`` tree (an export of an earlier
commit), the trees alternated per round. Recorded per run: wall and CPU seconds, each phase's
seconds (from the run's event log), the exit code, the verdict tally, the requirements that failed,
were blocked or not verified, the stall guard's count of stalls per route, and the other load on
the machine meanwhile. Target: under 90 s on a 2-core machine.

    python bench/stalled_streams.py [--rounds N] [--versus TREE ...] [--output stalled_streams]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import PYTHON, ROOT, free_port, machine, mock_command, run_from, server, write_json, write_table
from suite_throughput import _tree_name

FAULTS = (("sgr-agent-core", "sgr-stall-mid-stream"), ("neuro-san", "ns-stream-stall"))
TARGET_SECONDS = 90.0
PHASES = ("preflight", "schema", "model", "scenario")


def one_run(tree: Path, protocol: str, base_url: str, folder: Path, bound: float) -> dict[str, Any]:
    events = folder / "events.jsonl"
    command = [PYTHON, "-m", "conformance", "run", "--protocol", protocol, "--base-url", base_url]
    command += ["--report-dir", str(folder / "reports"), "-q", "--events", str(events)]
    ran = run_from(tree, command, bound)
    if ran.done is None:
        return {"tree": _tree_name(tree), "error": f"still running after {bound:g} s"}
    done = ran.done
    row: dict[str, Any] = {
        "tree": _tree_name(tree),
        "exit_code": done.returncode,
        "wall_s": round(ran.wall_s, 1),
        "cpu_s": round(ran.cpu_s, 1),
        "other_load_cores": ran.other_load_cores,
        "phases_s": dict.fromkeys(PHASES, 0.0),
    }
    for line in events.read_text().splitlines() if events.exists() else ():
        event = json.loads(line)
        if event.get("event") == "phase_finished":
            row["phases_s"][event["phase"]] = round(float(event["duration_s"]), 1)
    results = folder / "reports" / "results.json"
    if not results.exists():
        row["error"] = (done.stderr.strip() or done.stdout.strip())[-600:]
        return row
    data = json.loads(results.read_text())
    row["must"] = data["summary"]["must"]
    row["not_passed"] = {r["id"]: r["status"] for r in data["requirements"] if r["status"] != "passed"}
    row["stalled_routes"] = data["stats"].get("stalled_routes") or data["stats"].get("schema_stalled_routes")
    row["stopped"] = data.get("stopped")
    return row


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--versus", type=Path, action="append", default=[], help="an earlier tree to run beside")
    parser.add_argument("--bound", type=float, default=900.0, help="seconds after which a run is given up")
    parser.add_argument("--output", default="stalled_streams")
    args = parser.parse_args(argv)
    trees = [ROOT, *(tree.resolve() for tree in args.versus)]
    facts = machine()
    rows = []
    with tempfile.TemporaryDirectory(prefix="stalled-") as tmp:
        for n in range(args.rounds):
            for protocol, fault in FAULTS:
                order = trees[n % len(trees) :] + trees[: n % len(trees)]
                for tree in order:
                    port = free_port()
                    command = mock_command(port, "--protocol", protocol, "--fault", fault)
                    with server(f"mock {fault}", command, port, cpu=None) as mock:
                        folder = Path(tmp) / f"{n}-{fault}-{trees.index(tree)}"
                        row = one_run(tree, protocol, mock.url, folder, args.bound)
                    row.update(round=n + 1, protocol=protocol, fault=fault)
                    rows.append(row)
                    print(json.dumps(row), flush=True)
    lines = [
        "| round | fault | tree | wall s | CPU s | preflight / schema / model / scenario s | exit | MUST "
        "passed / failed / not verified | not passed | stalls per route | other load | < 90 s |",
        "|---:|---|---|---:|---:|---|---:|---|---|---|---:|---|",
    ]
    for r in rows:
        if "error" in r and "must" not in r:
            lines.append(f"| {r['round']} | {r['fault']} | {r['tree']} | | | | | | error: {r['error'][:80]} | | | |")
            continue
        phases = " / ".join(f"{r['phases_s'][p]:.1f}" for p in PHASES)
        must = r["must"]
        unverified = must.get("not verified", must.get("skipped"))  # results.json before format 5: "skipped"
        stalls = ", ".join(f"{route} {o['stalls']}" for route, o in (r["stalled_routes"] or {}).items())
        met = "met" if r["wall_s"] < TARGET_SECONDS else "**missed**"
        lines.append(
            f"| {r['round']} | {r['fault']} | {r['tree']} | {r['wall_s']:.1f} | {r['cpu_s']:.1f} | {phases} | "
            f"{r['exit_code']} | {must['passed']} / {must['failed']} / {unverified} | "
            f"{', '.join(f'{k} {v}' for k, v in r['not_passed'].items())} | {stalls} | "
            f"{r['other_load_cores']:.2f} cores | {met} |"
        )
    text = "\n".join(lines) + "\n"
    settings = {**vars(args), "versus": [_tree_name(t) for t in trees[1:]]}
    write_json(f"{args.output}.json", {"machine": facts, "settings": settings, "rows": rows})
    write_table(f"{args.output}.md", "Runs against streams that stall after their first events", text, facts)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
