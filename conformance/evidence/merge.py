"""``conformance merge DIR... -o OUT``: the reports of a campaign's shards (``--shard K/N``) as one
run's reports.

Each shard's ``results.json`` carries its share (``RunResult.shard``): the units it ran, what its
property-based and model-based phases counted (their tallies), and the campaign every shard must
share (suite version, document, seeds, options). The merge refuses shards of different campaigns,
naming the first difference, and an incomplete or repeated set of shards (exit 2). It decides the
phases' verdicts from the summed tallies with the functions the single run uses (a requirement
fails where any shard's cases failed it, and passes only where the shards' cases all passed, on
the same terms as one run), takes each scenario requirement from the shard that ran it, applies
the campaign's baseline, and writes every report format from the merged run.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from conformance.check.coverage import combined
from conformance.phases.model.engine import ModelTally, model_verdicts
from conformance.phases.schema.engine import SchemaTally, schema_verdicts
from conformance.run.suites import build
from conformance.settings.usage import UsageError
from conformance.verdicts.baseline import Entry, judge
from conformance.verdicts.requirements import Level, Requirement
from conformance.verdicts.results import RequirementResult, RunResult, Status, settle, unblock
from conformance.verdicts.sets import named, unscore
from specs import documents


class MergeError(UsageError):
    """The reports cannot be merged; the message names the report and the difference."""


@dataclass(frozen=True, slots=True)
class ShardReport:
    path: Path
    data: dict[str, Any]

    @property
    def share(self) -> dict[str, Any]:
        return dict(self.data["shard"])

    @property
    def index(self) -> int:
        return int(str(self.share["shard"]).split("/")[0])


def load(paths: Iterable[Path]) -> dict[str, list[ShardReport]]:
    """Each given report (a folder with results.json, a results.json, or a folder of protocol
    folders), by protocol; MergeError for one that is missing or no shard's."""
    found: dict[str, list[ShardReport]] = {}
    for given in paths:
        files = (
            [given]
            if given.is_file()
            else [given / "results.json"]
            if (given / "results.json").is_file()
            else sorted(given.glob("*/results.json"))
        )
        if not files:
            raise MergeError(f"{given}: no results.json there (a shard's --report-dir)")
        for file in files:
            try:
                data = json.loads(file.read_text(encoding="utf-8"))
            except (OSError, ValueError) as exc:
                raise MergeError(f"{file}: cannot read it as a report ({exc})") from None
            if not isinstance(data, dict) or not isinstance(data.get("shard"), dict):
                raise MergeError(f"{file}: not a shard's report (run with --shard K/N, N > 1)")
            found.setdefault(str(data["protocol"]), []).append(ShardReport(file, data))
    return found


def check_campaign(reports: list[ShardReport]) -> int:
    """The shard count, once every report is of one campaign and each shard 1..N is there once."""
    first = reports[0]
    ours = first.share["campaign"]
    for other in reports[1:]:
        theirs = other.share["campaign"]
        for key in dict.fromkeys([*ours, *theirs]):
            if ours.get(key) != theirs.get(key):
                raise MergeError(
                    f"{other.path} is not a shard of the campaign of {first.path}: {key} differs "
                    f"({_show(theirs.get(key))} against {_show(ours.get(key))})"
                )
    count = int(ours["shards"])
    seen: dict[int, Path] = {}
    for report in reports:
        if report.index in seen:
            raise MergeError(f"shard {report.index}/{count} is given twice: {seen[report.index]} and {report.path}")
        seen[report.index] = report.path
    missing = [f"{k}/{count}" for k in range(1, count + 1) if k not in seen]
    if missing:
        raise MergeError(f"{first.data['protocol']}: shard(s) {', '.join(missing)} missing: merge all {count} shards")
    return count


def _show(value: Any) -> str:
    text = json.dumps(value)
    return text if len(text) <= 80 else text[:77] + "..."


def merge(reports: list[ShardReport]) -> RunResult:
    """One run's result from all the shards of one campaign (``check_campaign`` first)."""
    reports = sorted(reports, key=lambda r: r.index)
    first = reports[0].data
    campaign = reports[0].share["campaign"]
    # every requirement the suite has for the document: the shards' reports name those that applied
    # (deciding it again would import schemathesis for nothing else)
    document = documents.load(first["protocol"], campaign["profile"])
    registry = {c.requirement.id: c.requirement for c in build(document, every_schema_requirement=True).registry}
    run = RunResult(
        protocol=first["protocol"],
        target=first["target"],
        suite_version=first["suite_version"],
        seed=first["seed"],
        level=Level(first["level"]),
        started_at=min(r.data["started_at"] for r in reports),
        finished_at=max(r.data["finished_at"] for r in reports),
        duration_s=max(float(r.data["duration_s"]) for r in reports),
    )
    run.base_url = first.get("base_url", "")
    run.meta = {k: first[k] for k in _META if k in first}
    run.meta["merged_from"] = [f"{r.share['shard']} {r.path.parent.name}" for r in reports]
    run.fatal = next((r.data["fatal"] for r in reports if r.data.get("fatal")), None)
    run.stopped = next((r.data["stopped"] for r in reports if r.data.get("stopped")), None)
    entries = tuple(Entry(**e) for e in campaign["expected_failures"])

    decided: dict[str, RequirementResult] = {}
    for report in reports:  # each scenario requirement from the shard it was dealt to
        ran = {u.split(":", 1)[1] for u in report.share["units"] if u.startswith("scenario:")}
        for data in report.data["requirements"]:
            if data["id"] in ran:
                decided[data["id"]] = RequirementResult.from_dict(data, run.protocol, registry[data["id"]])
    phase_ids: dict[str, set[str]] = {"schema": set(), "model": set()}
    for report in reports:
        for data in report.data["requirements"]:
            if data["phase"] in phase_ids:
                phase_ids[data["phase"]].add(data["id"])
    tallies = [r.share["tallies"] for r in reports]
    if phase_ids["schema"]:
        schema = SchemaTally.empty(())
        for t in tallies:
            if "schema" in t:
                schema.absorb(t["schema"])
        run.stats.update(schema.stats())
        for res in schema_verdicts(_in_order(registry, phase_ids["schema"]), schema):
            decided[res.requirement.id] = res
    if phase_ids["model"]:
        model = ModelTally.empty(())
        for t in tallies:
            if "model" in t:
                model.absorb(t["model"])
        run.stats.update(model.stats())
        for res in model_verdicts(_in_order(registry, phase_ids["model"]), model):
            decided[res.requirement.id] = res
    order = list(registry)
    run.results = sorted(decided.values(), key=lambda r: order.index(r.requirement.id))
    verdicts: dict[str, Status | None] = {r.requirement.id: r.status for r in run.results}
    for res in run.results:  # a shard left blocked what another shard's requirement blocked
        unblock(res, verdicts)
    frozen = named(campaign["requirement_set"], run.protocol) if campaign.get("requirement_set") else None
    for res in run.results:
        res.baseline, res.baseline_reason = "", ""
        if frozen is not None:  # the phases' verdicts decided again here, scored as the shards scored theirs
            res.requirement = frozen.frozen(res.requirement)
            unscore(settle(res), frozen)
        judge(res, entries)
    run.coverage = combined([r.data.get("coverage") or {} for r in reports])
    return run


_META = (
    "spec",
    "hash_seed",
    "max_examples",
    "budget_s",
    "phases",
    "only",
    "requirement_set",
    "target_name",
    "target_version",
    "depth",
    "model_sequences",
    "model_step_factor",
    "example_db",
)
"""What a shard's results.json records of how to reproduce the run, kept in the merged one."""


def _in_order(registry: dict[str, Requirement], ids: set[str]) -> list[Requirement]:
    return [req for rid, req in registry.items() if rid in ids]
