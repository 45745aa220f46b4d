"""GitHub Actions: a finished run's reports as the job summary and annotations.

``python -m conformance.reporting.github REPORT_DIR --link URL`` (the Action's last step, after
the reports were uploaded, so ``URL`` is the uploaded artifact's) appends the run's summary.md to
``$GITHUB_STEP_SUMMARY``: under ``--protocol all`` the combined one, which is the verdict of every
protocol and then each protocol's summary once. It prints one ``::error`` workflow command for each
requirement that fails the job (``RunResult.failing``: a MUST failed, not verified or in error; a
stale baseline entry; a target error), and one ``::warning`` for each other requirement that failed,
each with its message as plain text and the link.

GitHub shows 10 error and 10 warning annotations per step and drops the rest without a word, so
past 9 of a kind the 10th says how many more there are and where they are.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path

from ..verdicts.results import RequirementResult, RunResult, Status
from .clip import clip

ANNOTATIONS_PER_KIND = 10
"""Error (and, separately, warning) annotations GitHub shows per step."""
SUMMARY_LIMIT = 1024 * 1024
"""Bytes GitHub accepts in one step's summary."""
MESSAGE_LIMIT = 1000
"""Characters of a requirement's message in its annotation (the whole message is in the reports)."""


def data(text: str) -> str:
    """A workflow command's message, escaped as the Actions toolkit does."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def prop(text: str) -> str:
    """A workflow command's property value (``title=``), escaped as the Actions toolkit does."""
    return data(text).replace(":", "%3A").replace(",", "%2C")


def results_files(root: Path) -> list[Path]:
    """A one-protocol run's results.json, or each protocol's of a run of several."""
    return [root / "results.json"] if (root / "results.json").is_file() else sorted(root.glob("*/results.json"))


def load_runs(root: Path) -> list[RunResult]:
    return [RunResult.from_dict(json.loads(p.read_text(encoding="utf-8"))) for p in results_files(root)]


def summary(root: Path, link: str) -> str:
    """The run's summary.md once (a combined one holds every protocol's), and where the reports are."""
    parts = [root / "summary.md"] if (root / "summary.md").is_file() else sorted(root.glob("*/summary.md"))
    if not parts:
        return f"# Conformance: no report was written (see the job log)\n\nRun: {link}\n"
    footer = f"\n\nThe reports (HTML, JUnit, JSON, events): {link}\n"
    text = "\n".join(p.read_text(encoding="utf-8").rstrip() for p in parts)
    room = SUMMARY_LIMIT - len(footer.encode()) - 200
    if len(text.encode()) > room:
        cut = text.encode()[:room].decode("utf-8", "ignore")
        text = cut[: cut.rfind("\n")] + "\n\n(The summary is cut here: GitHub takes 1 MiB per step.)"
    return text + footer


def _message(result: RequirementResult, link: str) -> str:
    return f"{result.requirement.statement}\n{clip(result.message, MESSAGE_LIMIT)}\nReports: {link}"


def _annotations(runs: list[RunResult], link: str) -> Iterator[tuple[str, str, str]]:
    """(kind, title, message) for each annotation, the job's reasons to fail first."""
    for run in runs:
        if run.fatal:
            yield "error", f"{run.protocol}: target error", f"{run.fatal}\nReports: {link}"
    for run in runs:
        for r in run.stale:
            rid = f"{r.requirement.id} ({r.requirement.level.value.upper()})"
            reason = f" ({r.baseline_reason})" if r.baseline_reason else ""
            yield "error", f"{rid} stale", f"listed in the expected failures{reason} but passes now: remove it"
        stale = {id(r) for r in run.stale}
        for r in run.failing:
            if id(r) not in stale:
                rid = f"{r.requirement.id} ({r.requirement.level.value.upper()})"
                yield "error", f"{rid} {r.verdict}", _message(r, link)
    for run in runs:
        failing = {id(r) for r in run.failing}
        for r in run.results:
            if r.status is Status.FAILED and not r.baseline and id(r) not in failing:
                yield "warning", f"{r.requirement.id} ({r.requirement.level.value.upper()}) failed", _message(r, link)


def workflow_commands(runs: list[RunResult], link: str) -> list[str]:
    """The workflow commands, at most ``ANNOTATIONS_PER_KIND`` of each kind."""
    every: dict[str, list[tuple[str, str]]] = {"error": [], "warning": []}
    for kind, title, message in _annotations(runs, link):
        every[kind].append((title, message))
    lines = []
    for kind, found in every.items():
        shown = found if len(found) <= ANNOTATIONS_PER_KIND else found[: ANNOTATIONS_PER_KIND - 1]
        lines += [f"::{kind} title={prop(title)}::{data(message)}" for title, message in shown]
        if len(found) > len(shown):
            more = len(found) - len(shown)
            lines.append(
                f"::{kind} title={prop(f'{more} more')}::"
                + data(f"{more} more {kind}s than GitHub shows: the job summary and the reports list each: {link}")
            )
    return lines


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m conformance.reporting.github",
        description="A finished run's reports as the GitHub job summary and annotations.",
    )
    p.add_argument("report_dir", type=Path)
    p.add_argument("--link", default="", help="where the uploaded reports are (the artifact's URL)")
    p.add_argument("--exit-code", default="", help="the run's exit code, said when it wrote no report")
    args = p.parse_args(argv)
    link = args.link or "the uploaded reports artifact"
    text = summary(args.report_dir, link)
    target = os.environ.get("GITHUB_STEP_SUMMARY")
    if target:
        with open(target, "a", encoding="utf-8") as out:
            out.write(text + "\n")
    else:
        sys.stdout.write(text + "\n")
    runs = load_runs(args.report_dir)
    if not runs and args.exit_code not in ("", "0"):
        ended = f"the run ended with exit code {args.exit_code} before writing a report: the job log says why"
        print(f"::error title={prop('conformance: no report')}::{data(ended)}")
    for line in workflow_commands(runs, link):
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
