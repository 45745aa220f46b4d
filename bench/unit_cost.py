"""What each unit of a campaign's work costs in CPU, against the weight ``--shard``'s deal gave it.

Runs one protocol's campaign in this process (its embedded mock in a thread of the same process,
so a unit's CPU is what a shard pays for it: the suite's side and the target's) and charges the
process's CPU to the unit that spent it: the property-based phase by schemathesis's scenarios
(one per stage and operation, and the stateful stage), the targeted cases to their operation's
``examples`` unit (they go with it, ``phases/schema/engine.py``), the model-based phase by range of
sequences, the scenarios by requirement. It prints, per stage, the cases and the CPU per case
(the factors ``run/shards.py`` weighs stages by), and the critical path of the deal of 2 and 4
shards under the weights, in measured CPU.

    python bench/unit_cost.py [--protocol agent-protocol] [--depth deep] [--output NAME] [-- RUN OPTIONS]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import defaultdict
from typing import Any

from _common import ROOT, machine, write_json, write_table

from conformance.run.events import CaseFinished, Emitter, PhaseStarted, RequirementFinished, StageStarted
from conformance.run.shards import STATEFUL, Unit, deal


def clock() -> tuple[float, float]:
    """(this process's CPU seconds, wall seconds)."""
    return time.process_time(), time.monotonic()


class Meter:
    """Process CPU seconds charged to unit names, and the cases each unit sent."""

    def __init__(self) -> None:
        self.cpu: dict[str, float] = defaultdict(float)
        self.wall: dict[str, float] = defaultdict(float)
        self.cases: dict[str, int] = defaultdict(int)
        self.scenario_mark: tuple[float, float] | None = None
        self.targeted_mark: tuple[float, float] | None = None
        self.phase = ""

    def charge(self, name: str, since: tuple[float, float], cases: int = 0) -> tuple[float, float]:
        """Charge the CPU and wall seconds since ``since`` (a ``clock()``) to ``name``; the clock now."""
        now = clock()
        self.cpu[name] += now[0] - since[0]
        self.wall[name] += now[1] - since[1]
        self.cases[name] += cases
        return now

    def handle(self, event: Any) -> None:
        now = clock()
        if isinstance(event, PhaseStarted):
            self.phase = event.phase
            self.scenario_mark = now
        elif isinstance(event, StageStarted) and event.stage == "targeted":
            self.targeted_mark = now
        elif isinstance(event, CaseFinished) and event.stage == "targeted" and self.targeted_mark is not None:
            self.targeted_mark = self.charge(f"schema:examples {event.operation}", self.targeted_mark, 1)
        elif isinstance(event, RequirementFinished) and self.phase == "scenario" and self.scenario_mark is not None:
            self.scenario_mark = self.charge(f"scenario:{event.result.requirement.id}", self.scenario_mark)


def instrument(meter: Meter) -> None:
    """Stamp schemathesis's scenarios (made in its worker thread as each starts and ends), the
    model phase's ranges, and add the meter to every run's handlers."""
    from schemathesis.engine import events

    import conformance.phases.model.engine as model_engine

    started: dict[Any, tuple[float, float]] = {}
    start_init, finish_init = events.ScenarioStarted.__init__, events.ScenarioFinished.__init__

    def on_start(self: Any, **kw: Any) -> None:
        start_init(self, **kw)
        started[kw["suite_id"], kw["label"]] = clock()

    def on_finish(self: Any, **kw: Any) -> None:
        finish_init(self, **kw)
        t0 = started.pop((kw["suite_id"], kw["label"]), None)
        if t0 is None:
            return
        stage = kw["phase"].value
        stage = STATEFUL if stage.startswith("stateful") else stage
        key = STATEFUL if stage == STATEFUL else f"{stage} {kw['label']}"
        meter.charge(f"schema:{key}", t0, len(kw["recorder"].cases))

    events.ScenarioStarted.__init__ = on_start  # type: ignore[method-assign]
    events.ScenarioFinished.__init__ = on_finish  # type: ignore[method-assign]

    run_range = model_engine._run_range

    def timed_range(model: Any, session: Any, spec: Any, seed: int, count: int, *rest: Any) -> Any:
        t0, calls = clock(), session.requests
        out = run_range(model, session, spec, seed, count, *rest)
        first = timed_range.first  # type: ignore[attr-defined]
        meter.charge(f"model:sequences {first}-{first + count - 1}", t0, session.requests - calls)
        timed_range.first += count  # type: ignore[attr-defined]
        return out

    timed_range.first = 0  # type: ignore[attr-defined]
    model_engine._run_range = timed_range  # type: ignore[assignment]

    emitter_init = Emitter.__init__

    def with_meter(self: Any, handlers: Any = ()) -> None:
        emitter_init(self, [*handlers, meter])

    Emitter.__init__ = with_meter  # type: ignore[method-assign]


def measure(protocol: str, depth: str, extra: list[str]) -> dict[str, Any]:
    from conformance.cli.commands import parser
    from conformance.engine.runner import run
    from conformance.run.plan import plan, work
    from conformance.run.suites import suite
    from conformance.settings import config

    meter = Meter()
    instrument(meter)
    args = parser().parse_args(["run", "--protocol", protocol, "--depth", depth, "-q", *extra])
    given = config.Invocation(config.given(vars(args)), {}, config.load(None, ROOT, {}))
    (options,) = given.runs()
    the_plan = plan(options)
    units = work(the_plan.spec, suite(protocol, options.profile), options, list(the_plan.checks))
    t0 = time.process_time()
    result = run(options)
    total = time.process_time() - t0
    rows: list[dict[str, Any]] = [
        {
            "unit": u.name,
            "weight": u.weight,
            "cpu_s": round(meter.cpu.get(u.name, 0.0), 3),
            "wall_s": round(meter.wall.get(u.name, 0.0), 3),
            "cases": meter.cases.get(u.name, 0),
        }
        for u in units
    ]
    charged = sum(r["cpu_s"] for r in rows)
    return {
        "protocol": protocol,
        "depth": depth,
        "run_cpu_s": round(total, 2),
        "charged_cpu_s": round(charged, 2),
        "schema_cases": result.stats.get("schema_cases"),
        "units": rows,
        "deals": {str(n): critical_path(units, rows, n) for n in (2, 4)},
    }


def stage_of(name: str) -> str:
    phase, _, key = name.partition(":")
    return key.split(" ", 1)[0] if phase == "schema" else phase


def critical_path(units: list[Unit], rows: list[dict[str, Any]], count: int) -> dict[str, Any]:
    """Each shard's measured CPU and wall seconds under the deal, and the ideal (the whole divided by
    ``count``)."""
    out: dict[str, Any] = {}
    for kind in ("cpu_s", "wall_s"):
        cost = {r["unit"]: r[kind] for r in rows}
        out[f"shards_{kind}"] = [round(sum(cost[u.name] for u in share), 2) for share in deal(units, count)]
        out[f"ideal_{kind}"] = round(sum(cost.values()) / count, 2)
    return out


def stages(rows: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = defaultdict(
        lambda: {"cpu_s": 0.0, "wall_s": 0.0, "cases": 0, "units": 0, "weight": 0.0}
    )
    for r in rows:
        s = out[stage_of(r["unit"])]
        s["cpu_s"] += r["cpu_s"]
        s["wall_s"] += r["wall_s"]
        s["cases"] += r["cases"]
        s["units"] += 1
        s["weight"] += r["weight"]
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--protocol", default="agent-protocol")
    parser.add_argument("--depth", default="deep")
    parser.add_argument("--output", default="")
    parser.add_argument("extra", nargs="*", help="more `conformance run` options, after --")
    args = parser.parse_args()
    data = measure(args.protocol, args.depth, args.extra)
    lines = [
        "| stage | units | cases | CPU s | CPU ms per case | wall s | wall ms per case | weight |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for stage, s in sorted(stages(data["units"]).items()):
        cpu = f"{1000 * s['cpu_s'] / s['cases']:.1f}" if s["cases"] else "-"
        wall = f"{1000 * s['wall_s'] / s['cases']:.1f}" if s["cases"] else "-"
        lines.append(
            f"| {stage} | {s['units']} | {s['cases']:,} | {s['cpu_s']:.2f} | {cpu} | {s['wall_s']:.2f} | {wall} "
            f"| {s['weight']:,.0f} |"
        )
    lines.append("")
    lines.append(f"run CPU {data['run_cpu_s']} s, charged to units {data['charged_cpu_s']} s")
    for n, d in data["deals"].items():
        lines.append(
            f"{n} shards: measured CPU per shard {d['shards_cpu_s']} (ideal {d['ideal_cpu_s']}), "
            f"wall {d['shards_wall_s']} (ideal {d['ideal_wall_s']})"
        )
    table = "\n".join(lines) + "\n"
    print(table)
    print(json.dumps(sorted(data["units"], key=lambda r: -r["cpu_s"])[:25], indent=1), file=sys.stderr)
    if args.output:
        facts = {**machine(), "protocol": args.protocol, "depth": args.depth}
        write_json(f"{args.output}.json", {"facts": facts, **data})
        write_table(f"{args.output}.md", f"CPU per unit of a {args.depth} {args.protocol} campaign", table, facts)
    return 0


if __name__ == "__main__":
    sys.exit(main())
