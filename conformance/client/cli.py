"""``python -m conformance client --protocol P [--scenario NAME ...] -- COMMAND [ARGS...]``: the
mock plays each scenario for the client's command, whose traffic and exit status are judged."""

from __future__ import annotations

import argparse
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from specs.documents import PROTOCOLS

from ..usage import UsageError, check_report_dir
from ..verdicts import baseline
from ..verdicts.requirements import Authority, Level
from ..verdicts.results import Status
from .judges import Judged, Play
from .requirements import client_suite
from .scenarios import Scenario, scenarios

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
DEFAULT_TIMEOUT_S = 30.0
MAX_TIMEOUT_S = 3600.0


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "client",
        help="judge a client: the mock plays named scenarios, the client's command runs against each",
        description="Each scenario starts the reference mock for it and runs COMMAND with CONFORMANCE_BASE_URL, "
        "CONFORMANCE_SCENARIO (and for synapse-agent CONFORMANCE_TOKEN, CONFORMANCE_SECOND_TOKEN) set and "
        "{base_url} replaced in its arguments. Contract: exit 0 when the task the scenario asked for succeeded, "
        "non-zero when the client gave up (docs/client.md).",
    )
    p.add_argument("--protocol", required=True, choices=sorted(PROTOCOLS))
    p.add_argument("--scenario", action="append", default=[], metavar="NAME", help="only these scenarios")
    p.add_argument("--list", action="store_true", help="list the protocol's scenarios and exit")
    p.add_argument(
        "--timeout",
        type=float,
        default=DEFAULT_TIMEOUT_S,
        help=f"seconds the command may take per scenario; killed then (default {DEFAULT_TIMEOUT_S:g})",
    )
    p.add_argument("--seed", type=int, default=0, help="the mock's seed (default 0)")
    p.add_argument("--report-dir", type=Path, help="default reports/client-<protocol>-<timestamp>/")
    p.add_argument(
        "--expected-failures",
        type=Path,
        metavar="FILE",
        help="YAML baseline of known failures, as for run: listed ones do not fail, listed ones that pass do",
    )
    p.add_argument("-q", "--quiet", action="store_true", help="no per-scenario lines")
    p.add_argument(
        "-v", "--verbose", action="store_true", help="after a scenario that is not ok, the end of the client's output"
    )
    p.add_argument("client_command", nargs=argparse.REMAINDER, metavar="-- COMMAND [ARGS...]")


def describe(scenario: Scenario) -> str:
    return (
        f"{scenario.name}\n  the mock: {scenario.mock}\n  the client: {scenario.task}\n"
        f"  decides: {', '.join(scenario.requirement_ids)}"
    )


def chosen(protocol: str, names: list[str]) -> list[Scenario]:
    known = scenarios(protocol)
    if not known:
        raise UsageError(f"{protocol} has no client scenarios yet (docs/client.md lists them)")
    unknown = sorted(set(names) - {s.name for s in known})
    if unknown:
        raise UsageError(f"no {protocol} scenario {', '.join(unknown)}; choose from {', '.join(s.name for s in known)}")
    return [s for s in known if not names or s.name in names]


def verdict_line(play: Play, verdicts: dict[str, Judged]) -> str:
    """One scenario in a line: FAIL when it failed a MUST of the document, warn when only a SHOULD,
    a MAY or a practice requirement (advice), ok otherwise."""
    suite = client_suite(play.protocol)
    failed = [suite.get(rid).requirement for rid, v in verdicts.items() if v.status is Status.FAILED]
    gates = any(r.level is Level.MUST and r.authority is Authority.DOCUMENT for r in failed)
    head = "FAIL" if gates else "warn" if failed else "ok"
    said = ", ".join(f"{rid} {v.status.value}" for rid, v in verdicts.items())
    count = len(play.exchanges)
    return f"{head:4} {play.protocol} {play.scenario}: {play.ended}, {count} request{'s' * (count != 1)}; {said}"


def command(args: argparse.Namespace) -> int:
    from ..reporting import write_reports
    from .play import ScenarioError, play
    from .report import run_result

    picked = chosen(args.protocol, args.scenario)
    if args.list:
        registry = {c.requirement.id: c.requirement for c in client_suite(args.protocol)}
        for scenario in picked:
            print(describe(scenario))
        print("\nrequirements:")
        for r in registry.values():
            print(f"  {r.id:16} {r.level.value.upper():6} {r.authority.value:8} {r.statement}  [{r.ref}]")
        return EXIT_OK
    argv = list(args.client_command)
    if argv[:1] == ["--"]:
        argv = argv[1:]
    if not argv:
        raise UsageError("give the client's command after --: client --protocol P -- COMMAND [ARGS...]")
    if not 0 < args.timeout <= MAX_TIMEOUT_S:
        raise UsageError(f"--timeout must be between 0 and {MAX_TIMEOUT_S:g} seconds")
    entries: tuple[baseline.Entry, ...] = ()
    if args.expected_failures is not None:
        try:
            entries = baseline.load(args.expected_failures)
            known = {c.requirement.id for c in client_suite(args.protocol)}
            baseline.check_ids(entries, known, args.expected_failures)
        except baseline.BaselineError as exc:
            raise UsageError(str(exc)) from None
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    folder = args.report_dir or Path("reports") / f"client-{args.protocol}-{stamp}"
    check_report_dir(folder)
    started_at = datetime.now(UTC).isoformat(timespec="seconds")
    started = time.monotonic()
    plays = []
    for scenario in picked:
        try:
            played = play(scenario, argv, args.timeout, args.seed)
        except ScenarioError as exc:
            print(f"error: scenario {scenario.name}: {exc}", file=sys.stderr)
            return EXIT_USAGE
        plays.append(played)
        if not args.quiet:
            line = verdict_line(*played)
            print(line, file=sys.stderr, flush=True)
            if args.verbose and not line.startswith("ok") and played[0].output:
                print("\n".join(f"     | {text}" for text in played[0].output.splitlines()), file=sys.stderr)
    result = run_result(args.protocol, argv, plays, started_at, time.monotonic() - started, args.seed)
    for res in result.results:
        baseline.judge(res, entries)
    write_reports(result, folder)
    tally = result.tally()["must"]
    print(
        f"client {args.protocol}: {result.verdict} ({tally['passed']} MUST passed, {tally['failed']} failed, "
        f"{tally['not verified']} not verified); reports in {folder}"
    )
    return result.exit_code
