"""``conformance diff OLD NEW`` and ``conformance history DIR...``: what changed between runs.

Two reports of one protocol (their results.json) are compared requirement by requirement: each
verdict that moved (worse or better, by the one order of ``verdicts.results.ORDER``), each
requirement only one of them holds (added, removed), and each finding new or gone, by its key
(stable across runs and suite versions). As text, markdown (a pull request comment: one short
table) or JSON. ``history`` is the same over time: one line per run, oldest first.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conformance.reporting.clip import clip
from conformance.verdicts.results import ORDER, Status


class DiffError(Exception):
    """A folder that holds no report, or reports that cannot be compared (exit 2)."""


@dataclass(frozen=True)
class Report:
    """What a comparison reads of one results.json."""

    path: Path
    protocol: str
    suite_version: str
    started_at: str
    verdicts: dict[str, Status]
    findings: dict[str, tuple[str, str]]
    """Each finding's key: its requirement and message."""

    @property
    def date(self) -> str:
        """``2026-12-04 21:42``: the run's start to the minute, as a history line shows it."""
        return self.started_at[:16].replace("T", " ")

    def counts(self) -> dict[Status, int]:
        return {status: sum(v is status for v in self.verdicts.values()) for status in ORDER}


def load(path: Path) -> Report:
    """A report folder (or its results.json), or DiffError saying why it is none."""
    file = path / "results.json" if path.is_dir() else path
    inside = sorted(p.parent.name for p in path.glob("*/results.json")) if path.is_dir() else []
    if inside and not file.is_file():  # a run of several protocols: one report folder each
        names = ", ".join(inside)
        raise DiffError(f"{path} holds a report per protocol ({names}): compare one, e.g. {path / inside[0]}")
    try:
        data: Any = json.loads(file.read_bytes())
    except (OSError, ValueError) as exc:
        raise DiffError(f"{path} is not a report: cannot read {file.name} ({exc})") from None
    items = data.get("requirements") if isinstance(data, dict) else None
    if not isinstance(items, list) or not isinstance(data.get("protocol"), str):
        raise DiffError(f"{path} is not a report: {file.name} has no protocol and requirements")
    verdicts: dict[str, Status] = {}
    findings: dict[str, tuple[str, str]] = {}
    try:
        for item in items:
            rid = str(item["id"])
            verdicts[rid] = Status(item["status"])  # Status() reads every format version's words
            for finding in item.get("findings") or []:
                findings[str(finding["key"])] = (rid, str(finding.get("message") or ""))
    except (KeyError, TypeError, ValueError) as exc:
        raise DiffError(f"{path} is not a report: a requirement of {file.name} is unreadable ({exc})") from None
    return Report(
        file.parent, data["protocol"], str(data.get("suite_version") or "?"), str(data.get("started_at") or ""),
        verdicts, findings,
    )  # fmt: skip


@dataclass(frozen=True)
class Moved:
    id: str
    old: Status
    new: Status

    @property
    def direction(self) -> str:
        """``worse`` or ``better`` by the verdicts' order; ``rescored`` when either side is not
        scored (a requirement outside one run's frozen set): neither, since it never gated."""
        if Status.NOT_SCORED in (self.old, self.new):
            return "rescored"
        return "worse" if self.new.rank > self.old.rank else "better"

    @property
    def worse(self) -> bool:
        return self.direction == "worse"


@dataclass(frozen=True)
class Diff:
    old: Report
    new: Report
    moved: list[Moved] = field(default_factory=list)
    added: dict[str, Status] = field(default_factory=dict)
    removed: dict[str, Status] = field(default_factory=dict)
    new_findings: list[str] = field(default_factory=list)
    gone_findings: list[str] = field(default_factory=list)

    @property
    def worse(self) -> list[Moved]:
        return [m for m in self.moved if m.worse]

    @property
    def better(self) -> list[Moved]:
        return [m for m in self.moved if m.direction == "better"]

    @property
    def rescored(self) -> list[Moved]:
        """Moves into or out of not scored (one run scored a frozen set the other did not hold it in)."""
        return [m for m in self.moved if m.direction == "rescored"]

    @property
    def exit_code(self) -> int:
        """1 when a requirement got worse, else 0."""
        return 1 if self.worse else 0

    @property
    def empty(self) -> bool:
        return not (self.moved or self.added or self.removed or self.new_findings or self.gone_findings)

    def summary(self) -> str:
        """``1 worse (AP-TASK-001), 0 better, ...``: the changes counted, the worse ones named."""
        if self.empty:
            return "no change"
        worse = self.worse
        named = f" ({', '.join(m.id for m in worse[:5])}{', ...' if len(worse) > 5 else ''})" if worse else ""
        rescored = f", {len(self.rescored)} rescored" if self.rescored else ""
        return (
            f"{len(worse)} worse{named}, {len(self.better)} better{rescored}, {len(self.added)} added, "
            f"{len(self.removed)} removed; findings: {len(self.new_findings)} new, {len(self.gone_findings)} gone"
        )

    def to_dict(self) -> dict[str, Any]:
        def side(report: Report) -> dict[str, Any]:
            return {
                "path": str(report.path),
                "suite_version": report.suite_version,
                "started_at": report.started_at,
            }

        def finding(key: str, report: Report) -> dict[str, str]:
            rid, message = report.findings[key]
            return {"key": key, "requirement": rid, "message": message}

        return {
            "protocol": self.new.protocol,
            "old": side(self.old),
            "new": side(self.new),
            "changed": [
                {"id": m.id, "old": m.old.value, "new": m.new.value, "worse": m.worse, "direction": m.direction}
                for m in self.moved
            ],
            "added": {rid: status.value for rid, status in self.added.items()},
            "removed": {rid: status.value for rid, status in self.removed.items()},
            "findings": {
                "new": [finding(key, self.new) for key in self.new_findings],
                "gone": [finding(key, self.old) for key in self.gone_findings],
            },
            "worse": len(self.worse),
        }


def compare(old: Report, new: Report) -> Diff:
    if old.protocol != new.protocol:
        raise DiffError(f"the reports are of different protocols: {old.protocol} and {new.protocol}")
    both = [rid for rid in new.verdicts if rid in old.verdicts]
    return Diff(
        old,
        new,
        moved=[
            Moved(rid, old.verdicts[rid], new.verdicts[rid]) for rid in both if old.verdicts[rid] != new.verdicts[rid]
        ],
        added={rid: s for rid, s in new.verdicts.items() if rid not in old.verdicts},
        removed={rid: s for rid, s in old.verdicts.items() if rid not in new.verdicts},
        new_findings=sorted(set(new.findings) - set(old.findings)),
        gone_findings=sorted(set(old.findings) - set(new.findings)),
    )


def render_text(diff: Diff) -> str:
    old, new = diff.old, diff.new
    lines = [
        f"{new.protocol}: {old.path} (suite {old.suite_version}, {old.date}) -> "
        f"{new.path} (suite {new.suite_version}, {new.date})"
    ]
    lines += [f"{m.direction.upper():8} {m.id}  {m.old} -> {m.new}" for m in diff.moved]
    lines += [f"{'ADDED':8} {rid}  {status}" for rid, status in diff.added.items()]
    lines += [f"{'REMOVED':8} {rid}  (was {status})" for rid, status in diff.removed.items()]
    lines += [f"+ finding {key}  {clip(new.findings[key][1], 160)}" for key in diff.new_findings]
    lines += [f"- finding {key}  {clip(old.findings[key][1], 160)}" for key in diff.gone_findings]
    lines.append(f"diff: {diff.summary()}")
    return "\n".join(lines) + "\n"


def _cell(text: str) -> str:
    """Text in a table cell: a pipe would end the cell, a newline the row."""
    return text.replace("|", "\\|").replace("\n", " ")


def _code(text: str) -> str:
    plain = text.replace("`", "'")  # a backtick would end the code span
    return f"`{plain}`"


FINDING_KEYS = 10
"""Finding keys a markdown comment lists."""


def render_markdown(diff: Diff) -> str:
    """A pull request comment: a headline, one table row per requirement that changed (its verdict,
    or its findings), the findings' keys folded away beneath."""
    new = diff.new
    head = f"### Conformance diff: {new.protocol}\n\n"
    head += f"{diff.old.date} (suite {diff.old.suite_version}) -> {new.date} (suite {new.suite_version}): "
    if diff.empty:
        return head + "no change.\n"
    head += f"**{len(diff.worse)} worse**, {len(diff.better)} better, "
    head += f"{len(diff.added)} added, {len(diff.removed)} removed\n"
    per: dict[str, list[int]] = {}
    for n, keys, report in ((0, diff.new_findings, diff.new), (1, diff.gone_findings, diff.old)):
        for key in keys:
            per.setdefault(report.findings[key][0], [0, 0])[n] += 1
    rows: dict[str, tuple[str, str, str]] = {}
    for m in diff.moved:
        rows[m.id] = (m.direction, m.old.value, m.new.value)
    for rid, status in diff.added.items():
        rows[rid] = ("added", "-", status.value)
    for rid, status in diff.removed.items():
        rows[rid] = ("removed", status.value, "-")
    for rid in per:
        if rid not in rows:
            status = new.verdicts.get(rid) or diff.old.verdicts[rid]
            rows[rid] = ("findings", status.value, status.value)
    order = {"worse": 0, "added": 1, "removed": 2, "findings": 3, "better": 4, "rescored": 5}
    table = ["| change | requirement | old | new | findings |", "|---|---|---|---|---|"]
    for rid, (change, before, after) in sorted(rows.items(), key=lambda kv: (order[kv[1][0]], kv[0])):
        plus, minus = per.get(rid, [0, 0])
        findings = ", ".join(part for part in (f"+{plus}" if plus else "", f"-{minus}" if minus else "") if part)
        table.append(f"| {change} | {_cell(rid)} | {before} | {after} | {findings or '-'} |")
    text = head + "\n" + "\n".join(table) + "\n"
    keys = [f"- new: {_code(k)}" for k in diff.new_findings] + [f"- gone: {_code(k)}" for k in diff.gone_findings]
    if keys:  # a comment stays short: the first keys, the rest counted (diff --format json has them all)
        more = f"\n- ... and {len(keys) - FINDING_KEYS} more" if len(keys) > FINDING_KEYS else ""
        text += "\n<details><summary>findings by key</summary>\n\n" + "\n".join(keys[:FINDING_KEYS])
        text += more + "\n\n</details>\n"
    return text


def render_json(diff: Diff) -> str:
    return json.dumps(diff.to_dict(), indent=2, ensure_ascii=False) + "\n"


def history(paths: Sequence[Path]) -> list[tuple[Report, Diff | None]]:
    """Each run oldest first (by its start; the order given breaks ties), with what changed since
    the one before it (None for the first)."""
    reports = sorted((load(p) for p in paths), key=lambda r: r.started_at)
    protocols = sorted({r.protocol for r in reports})
    if len(protocols) > 1:
        raise DiffError(f"the reports are of different protocols: {', '.join(protocols)}")
    return [(r, compare(reports[n - 1], r) if n else None) for n, r in enumerate(reports)]


def _counts(report: Report) -> str:
    return ", ".join(f"{count} {status}" for status, count in report.counts().items() if count)


def render_history_text(runs: list[tuple[Report, Diff | None]]) -> str:
    lines = [
        f"{report.date}  suite {report.suite_version}  {_counts(report)}  "
        f"{'first run' if diff is None else 'since the previous: ' + diff.summary()}  ({report.path})"
        for report, diff in runs
    ]
    return "\n".join(lines) + "\n"


def render_history_markdown(runs: list[tuple[Report, Diff | None]]) -> str:
    columns = [status.value for status in ORDER]
    lines = [
        f"### Conformance history: {runs[0][0].protocol}\n",
        f"| run | suite | {' | '.join(columns)} | since the previous |",
        "|---|---|" + "---|" * len(columns) + "---|",
    ]
    for report, diff in runs:
        counts = " | ".join(str(n) for n in report.counts().values())
        since = "first run" if diff is None else diff.summary()
        lines.append(f"| {report.date} | {_cell(report.suite_version)} | {counts} | {_cell(since)} |")
    return "\n".join(lines) + "\n"
