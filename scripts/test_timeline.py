"""Where a test run's time went, from its ``--junitxml`` (docs/development.md, where the tests'
time goes): wall and CPU seconds per module, the slowest tests, and each worker's timeline (how
long it ran tests, how long it sat idle while the run went on: the tail a slow last test makes).

    python scripts/test_timeline.py report.xml [--top 25] [--write-costs tests/costs.json]

``--write-costs`` keeps, for each module with a test of ``COSTLY_S`` or more, its longest test's
wall seconds: the table ``tests/conftest.py`` orders a session by (the longest first, so no worker
is left running one alone at the end).
"""

from __future__ import annotations

import argparse
import collections
import json
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

COSTLY_S = 5.0
"""A module whose longest test takes less is not worth ordering: it fills the gaps at the end."""


@dataclass(frozen=True)
class Case:
    module: str
    name: str
    wall: float
    cpu: float
    """Its CPU seconds: its call's, its setup's and its teardown's (``tests/conftest.py``), as its
    wall time (the junit's ``time``) holds all three: a test whose module fixture starts a server
    and runs the suite against it (the interop tests) spends its CPU in its setup."""
    started: float | None
    worker: str


def cases(path: Path) -> list[Case]:
    found = []
    for tc in ET.parse(path).iter("testcase"):
        parts = tc.get("classname", "").split(".")
        while parts and not parts[-1].startswith("test_"):
            parts.pop()
        props = {p.get("name"): p.get("value") for p in tc.iter("property")}
        started = props.get("started")
        found.append(
            Case(
                ".".join(parts) or tc.get("classname", ""),
                tc.get("name", ""),
                float(tc.get("time", 0)),
                sum(float(props.get(name) or 0) for name in ("cpu_s", "setup_cpu_s", "teardown_cpu_s")),
                float(started) if started else None,
                props.get("worker") or "?",
            )
        )
    return found


def costs(found: list[Case]) -> dict[str, float]:
    """Each module's longest test in wall seconds, for the modules with one of ``COSTLY_S`` or more
    (its file's path from the repository's root, as pytest names it)."""
    longest: dict[str, float] = {}
    for c in found:
        path = c.module.replace(".", "/") + ".py"
        longest[path] = max(longest.get(path, 0.0), c.wall)
    return {path: round(seconds) for path, seconds in longest.items() if seconds >= COSTLY_S}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("report", type=Path)
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--write-costs", type=Path, help="write each module's longest test (seconds) here")
    args = parser.parse_args(argv)
    found = cases(args.report)
    if args.write_costs:
        args.write_costs.write_text(json.dumps(costs(found), indent=1, sort_keys=True) + "\n")
    wall, cpu, count = collections.Counter[str](), collections.Counter[str](), collections.Counter[str]()
    for c in found:
        wall[c.module] += c.wall
        cpu[c.module] += c.cpu
        count[c.module] += 1
    print(f"{len(found)} tests: {sum(wall.values()):.0f} s of wall time, {sum(cpu.values()):.0f} s of CPU, summed")
    print(f"{'wall s':>8} {'cpu s':>8} {'tests':>6}  module")
    for module, seconds in wall.most_common(args.top):
        print(f"{seconds:8.1f} {cpu[module]:8.1f} {count[module]:6d}  {module}")
    print("slowest tests:")
    for c in sorted(found, key=lambda c: -c.wall)[: args.top]:
        print(f"{c.wall:8.1f} {c.cpu:8.1f}  {c.module}::{c.name}")
    timed = [c for c in found if c.started is not None]
    if not timed:
        return
    start = min(c.started for c in timed if c.started is not None)
    end = max(c.started + c.wall for c in timed if c.started is not None)
    print(f"timeline: {end - start:.0f} s from the first test's start to the last test's end")
    by_worker: dict[str, list[Case]] = collections.defaultdict(list)
    for c in timed:
        by_worker[c.worker].append(c)
    for worker, mine in sorted(by_worker.items()):
        busy = sum(c.wall for c in mine)
        last = max(c.started + c.wall for c in mine if c.started is not None)
        print(
            f"  {worker}: {len(mine)} tests, busy {busy:.0f} s, idle {end - start - busy:.0f} s, "
            f"done {end - last:.0f} s before the end"
        )


if __name__ == "__main__":
    main()
