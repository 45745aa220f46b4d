"""``--expected-failures FILE``: known failures a pipeline tolerates until they are fixed.

The file (YAML)::

    expected_failures:
      - id: AP-PAGE-004                  # any failure of this requirement
        reason: total_pages rounds down; upstream issue 123
      - id: AP-SCHEMA-001                # only this one distinct failure (a finding's key)
        failure: "AP-SCHEMA-001|GET /ap/v1/agent/tasks|ST101:500"
        reason: a page_size above 1000 crashes the list (vendor issue 77)

A listed failure is reported as expected and does not fail the run; a listed requirement that
passes is reported **stale** and fails the run, so the list shrinks as bugs are fixed. An id no
protocol registers is a usage error. ``conformance baseline REPORT_DIR`` writes such a file.

With ``failure`` keys, a failed requirement is expected only when every distinct failure it has
(its findings, ``results.Finding``) is listed: a new bug in a tolerated requirement still fails.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from .requirements import Authority
from .results import RequirementResult, Status


class BaselineError(ValueError):
    """The file cannot be used; the message names the file and the entry."""


@dataclass(frozen=True, slots=True)
class Entry:
    id: str
    reason: str
    failure: str | None = None
    """A finding's key (``<id>|<METHOD /path>|<kind>``): only that distinct failure is expected."""


_FIELDS = {"id", "reason", "failure", "message"}
"""``message`` is informative (the failure the key was made from) and not matched."""


def load(path: Path) -> tuple[Entry, ...]:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise BaselineError(f"cannot read {path}: {exc.strerror or exc}") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" line {mark.line + 1}" if mark is not None else ""
        raise BaselineError(f"{path}{where}: not valid YAML") from None
    if not isinstance(data, Mapping) or not isinstance(data.get("expected_failures"), list):
        raise BaselineError(f"{path}: expected a mapping with an 'expected_failures' list")
    entries = []
    for n, item in enumerate(data["expected_failures"], 1):
        where = f"{path}: expected_failures[{n}]"
        if not isinstance(item, Mapping):
            raise BaselineError(f"{where}: expected a mapping with 'id' and 'reason'")
        unknown = sorted(set(map(str, item)) - _FIELDS)
        if unknown:
            raise BaselineError(f"{where}: unknown key {unknown[0]!r} (known: {', '.join(sorted(_FIELDS))})")
        rid, reason, failure = item.get("id"), item.get("reason"), item.get("failure")
        if not isinstance(rid, str) or not rid.strip():
            raise BaselineError(f"{where}: 'id' must be a requirement id")
        if not isinstance(reason, str) or not reason.strip():
            raise BaselineError(f"{where} ({rid}): 'reason' must say why the failure is accepted")
        if failure is not None and (not isinstance(failure, str) or not failure.startswith(f"{rid.strip()}|")):
            raise BaselineError(f"{where} ({rid}): 'failure' must be a finding key '{rid.strip()}|<operation>|<kind>'")
        entries.append(Entry(rid.strip(), reason.strip(), failure))
    return tuple(entries)


def check_ids(entries: Iterable[Entry], known: set[str], path: Path) -> None:
    for entry in entries:
        if entry.id not in known:
            raise BaselineError(f"{path}: unknown requirement id {entry.id!r}")


def judge(res: RequirementResult, entries: Iterable[Entry]) -> None:
    """Mark a result ``expected`` or ``stale`` against the entries for its requirement."""
    mine = [e for e in entries if e.id == res.requirement.id]
    if not mine or res.requirement.authority is Authority.PRACTICE:  # advice never gates, listed or not
        return
    if res.status is Status.PASSED:
        res.baseline, res.baseline_reason = "stale", mine[0].reason
    elif res.status is Status.FAILED:
        whole = next((e for e in mine if e.failure is None), None)
        listed = {e.failure: e for e in mine if e.failure is not None}
        found = [f.key for f in res.findings]
        if whole is not None:
            res.baseline, res.baseline_reason = "expected", whole.reason
        elif found and all(key in listed for key in found):
            res.baseline = "expected"
            res.baseline_reason = "; ".join(dict.fromkeys(listed[key].reason for key in found))


def from_reports(report_dir: Path, *, with_keys: bool = True) -> str:
    """A baseline listing every failed requirement of the run(s) under ``report_dir``."""
    files = (
        [report_dir / "results.json"]
        if (report_dir / "results.json").is_file()
        else sorted(report_dir.glob("*/results.json"))
    )
    if not files:
        raise BaselineError(f"{report_dir}: no results.json (nor */results.json) to make a baseline from")
    entries: list[dict[str, Any]] = []
    header: list[str] = []
    for file in files:
        try:
            data = json.loads(file.read_text(encoding="utf-8"))
            failed = [r for r in data["requirements"] if r["status"] == Status.FAILED.value]
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise BaselineError(f"{file}: not a conformance results.json ({exc})") from None
        header.append(f"# {data['protocol']} against {data.get('target', '?')}, {data.get('started_at', '?')}")
        reason = f"failing when this baseline was made ({data.get('started_at', '?')}); say why"
        for r in failed:
            findings = (r.get("findings") or []) if with_keys else []
            if not findings:  # ids only, or a results.json without findings: any failure of it
                entries.append({"id": r["id"], "reason": reason})
            for f in findings:
                entries.append({"id": r["id"], "failure": f["key"], "message": f["message"][:300], "reason": reason})
    body = yaml.safe_dump({"expected_failures": entries}, sort_keys=False, allow_unicode=True, width=110)
    return "\n".join(["# Expected failures (conformance --expected-failures); each reason says why.", *header, body])
