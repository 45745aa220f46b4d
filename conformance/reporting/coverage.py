"""The coverage section of report.html and summary.md: what the run exercised of the document.

Read from ``RunResult.coverage`` (``check/coverage.py`` counted it from the run's own exchanges):
a line of totals, then one row per operation with its statuses, parameters and body properties,
each exercised (its count) or not, and the requirements whose exchanges exercised it.
"""

from __future__ import annotations

from html import escape
from typing import Any

from ..verdicts.results import RunResult

KINDS = (
    ("operations", "operations"),
    ("statuses", "documented statuses"),
    ("parameters", "parameters"),
    ("request_properties", "request properties"),
    ("response_properties", "response properties"),
)
WHAT = (
    "Counted from the exchanges this run made (no request of its own): an operation is exercised when a "
    "request was sent to it; a status when an answer with it came back (validated: received by the "
    "property-based phase, which checks each answer against the document); a parameter when a request "
    "carried it; a property when a JSON body sent or received held it at its top level. A stream's events "
    "are not counted here."
)


def totals_line(run: RunResult) -> str:
    totals = run.coverage.get("totals") or {}
    return ", ".join(
        f"{t['exercised']}/{t['documented']} {label}" for key, label in KINDS if (t := totals.get(key)) is not None
    )


def _statuses(op: dict[str, Any]) -> list[str]:
    out = []
    fallback = any(s["status"] == "default" for s in op["statuses"])
    for s in op["statuses"]:
        mark = "" if s["documented"] else " (as default)" if fallback else " (undocumented)"
        out.append(f"{s['status']}{mark}: {s['seen']}" + (f" ({s['validated']} validated)" if s["validated"] else ""))
    return out


def _items(op: dict[str, Any]) -> list[tuple[str, str, int]]:
    """(kind, item, count) for every parameter and property of the operation."""
    items = [("parameter", f"{p['name']} ({p['in']})", int(p["sent"])) for p in op["parameters"]]
    items += [("request property", p["name"], int(p["sent"])) for p in op["request_properties"]]
    items += [("response property", f"{p['status']}: {p['name']}", int(p["seen"])) for p in op["response_properties"]]
    return items


def _requirements(op: dict[str, Any]) -> str:
    return ", ".join(f"{rid} ({n})" for rid, n in op["requirements"].items())


def coverage_section(run: RunResult) -> str:
    """report.html's section: one collapsed block per operation (a table would not fit a phone)."""
    operations = run.coverage.get("operations")
    if not operations:
        return ""
    blocks = []
    for op in operations:
        items = _items(op)
        done = [f"{kind} {item}: {n}" for kind, item, n in items if n]
        missed = [f"{kind} {item}" for kind, item, n in items if n == 0]
        missed += [f"status {s['status']}" for s in op["statuses"] if s["documented"] and not s["seen"]]
        klass = "" if op["exercised"] and not missed else " class='s-not-verified'"
        parts = [f"<li>statuses seen: {escape('; '.join(_statuses(op)))}</li>"]
        parts += [f"<li>exercised: {escape('; '.join(done))}</li>"] if done else []
        parts += [f"<li class='s-not-verified'>not exercised: {escape('; '.join(missed))}</li>"] if missed else []
        parts += [f"<li>through (exchanges): {escape(_requirements(op))}</li>"] if op["requirements"] else []
        blocks.append(
            f"<details><summary{klass}><code>{escape(op['operation'])}</code>: {op['requests']} requests, "
            f"{len(done)} of {len(items)} parameters and properties</summary><ul>{''.join(parts)}</ul></details>"
        )
    return (
        "<h2 id='coverage'>Coverage of the document</h2>"
        f"<p>Exercised: {escape(totals_line(run))}.</p><p><small>{escape(WHAT)}</small></p>{''.join(blocks)}"
    )


def coverage_lines(run: RunResult) -> list[str]:
    """summary.md's section: a row per operation, then what was not exercised."""
    operations = run.coverage.get("operations")
    if not operations:
        return []
    lines = ["", "## Coverage of the document", "", f"Exercised: {totals_line(run)}. {WHAT}", ""]
    lines += ["| operation | requests | statuses seen | parameters and properties exercised |", "|---|---|---|---|"]
    missed: list[str] = []
    for op in operations:
        items = _items(op)
        hit = sum(1 for _, _, n in items if n)
        statuses = "; ".join(_statuses(op)).replace("|", "\\|")
        lines.append(f"| `{op['operation']}` | {op['requests']} | {statuses} | {hit}/{len(items)} |")
        gaps = [f"{kind} `{item}`" for kind, item, n in items if n == 0]
        gaps += [f"status {s['status']}" for s in op["statuses"] if s["documented"] and not s["seen"]]
        if not op["exercised"]:
            gaps = ["the operation itself"]
        if gaps:
            missed.append(f"- `{op['operation']}`: " + ", ".join(gaps))
    if missed:
        lines += ["", "Not exercised:", "", *missed]
    return lines
