"""The composition check at full size (issue 34): the mock with two to four catalogue faults at once.

For each protocol, ``--per-protocol`` combinations of pairwise combinable faults (the rule:
``conformance.selfcheck.composition.combinable``) drawn from ``--seed``; each runs against the embedded mock
with all its faults on, over the union of the requirements they declare (``exact=False``), and is
judged against each fault's verdicts alone (``tests/conformance/snapshots/selfcheck-seed0.json``:
what each leaves blocked). Recorded: combinations, how many composed, every problem, wall and CPU
seconds. The test suite runs a small seeded sample of the same (tests/conformance/selfcheck/test_composition.py).

    python bench/composition.py [--per-protocol 100] [--seed 0] [--workers 2] [--protocol P]
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import ROOT, machine, write_json, write_table

SNAPSHOT = ROOT / "tests" / "conformance" / "snapshots" / "selfcheck-seed0.json"


def cpu_seconds() -> float:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def main(argv: Sequence[str] | None = None) -> int:
    from conformance.selfcheck.composition import combination_pool, draw
    from mockserver import catalogue
    from specs.documents import PROTOCOLS

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--per-protocol", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0, help="the draw of the combinations")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--protocol", action="append", default=[], help="only these (default: all)")
    parser.add_argument("--output", default="composition")
    args = parser.parse_args(argv)
    alone = {name: entry["blocked"] for name, entry in json.loads(SNAPSHOT.read_text()).items()}
    faults = list(catalogue().values())
    protocols = args.protocol or sorted(PROTOCOLS)
    facts = machine()
    rows: list[dict[str, Any]] = []
    summary: dict[str, dict[str, Any]] = {}
    for protocol in protocols:
        combos = draw([f for f in faults if f.protocol == protocol], args.per_protocol, args.seed)
        wall, cpu = time.monotonic(), cpu_seconds()
        with combination_pool([[f.name for f in c] for c in combos], alone, args.workers) as futures:
            done = [future.result().to_dict() for future in futures]
        for row in done:
            if row["problems"]:
                print(json.dumps(row), flush=True)
        rows += done
        summary[protocol] = {
            "combinations": len(done),
            "composed": sum(r["composed"] for r in done),
            "wall_s": round(time.monotonic() - wall, 1),
            "cpu_s": round(cpu_seconds() - cpu, 1),
        }
        print(protocol, summary[protocol], flush=True)
    lines = ["| protocol | combinations | composed | wall s | CPU s |", "|---|---:|---:|---:|---:|"]
    for protocol, s in summary.items():
        lines.append(f"| {protocol} | {s['combinations']} | {s['composed']} | {s['wall_s']} | {s['cpu_s']} |")
    problems = [f"- {' + '.join(r['faults'])}: {'; '.join(r['problems'])}" for r in rows if r["problems"]]
    text = "\n".join(lines) + "\n" + ("\nDid not compose:\n\n" + "\n".join(problems) + "\n" if problems else "")
    write_json(f"{args.output}.json", {"machine": facts, "settings": vars(args), "summary": summary, "rows": rows})
    write_table(f"{args.output}.md", "Catalogue faults together (the composition check)", text, facts)
    print(text)
    return 0 if not problems else 1


if __name__ == "__main__":
    raise SystemExit(main())
