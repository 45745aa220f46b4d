"""``python -m conformance client --protocol P [--scenario NAME ...] -- COMMAND [ARGS...]``: the
mock plays each scenario for the client's command, whose traffic and exit status are judged."""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from conformance.settings import config
from conformance.settings.usage import UsageError, check_report_dir
from specs.documents import PROTOCOLS

from ..verdicts import baseline
from ..verdicts.requirements import Authority, Level
from ..verdicts.results import Status
from .judges import Judged, Play
from .requirements import client_suite
from .scenarios import Scenario, scenarios

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
DEFAULT_TIMEOUT_S = 30.0  # config.py's client-timeout default
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
    p.add_argument(
        "--protocol",
        choices=sorted(PROTOCOLS),
        help="required unless conformance.toml or CONFORMANCE_PROTOCOL names it",
    )
    p.add_argument(
        "--scenario", action="append", metavar="NAME", help="only these scenarios (config key client-scenario)"
    )
    p.add_argument("--list", action="store_true", help="list the protocol's scenarios and exit")
    p.add_argument(
        "--timeout",
        type=float,
        help=f"seconds the command may take per scenario; killed then (config key client-timeout, "
        f"default {DEFAULT_TIMEOUT_S:g})",
    )
    p.add_argument("--seed", type=int, help="the mock's seed (default 0)")
    p.add_argument(
        "--config",
        type=Path,
        metavar="FILE",
        help="default ./conformance.toml, else pyproject.toml: protocol, seed, client-command, client-scenario, "
        "client-timeout",
    )
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


@dataclass(frozen=True)
class Settings:
    """What the command line, the environment and the config file give the client mode, resolved
    with run's precedence (conformance/settings/config.py declares the keys)."""

    protocol: str
    scenarios: tuple[str, ...]
    timeout_s: float
    seed: int
    command: tuple[str, ...]


def settings(args: argparse.Namespace, environ: Mapping[str, str], cwd: Path) -> Settings:
    argv = list(args.client_command)
    if argv[:1] == ["--"]:
        argv = argv[1:]
    cli = {
        "protocol": args.protocol,
        "client_scenario": args.scenario,
        "client_timeout_s": args.timeout,
        "seed": args.seed,
        "client_command": argv or None,
    }
    given = config.Invocation(config.given(cli), config.from_env(environ), config.load(args.config, cwd, environ))
    protocol = given.protocol()
    if protocol not in PROTOCOLS:
        raise UsageError(f"client judges one protocol at a time; choose one of {', '.join(sorted(PROTOCOLS))}")
    return Settings(
        protocol,
        tuple(given.value(protocol, "client_scenario")),
        float(given.value(protocol, "client_timeout_s")),
        int(given.value(protocol, "seed")),
        tuple(given.value(protocol, "client_command")),
    )


def command(args: argparse.Namespace) -> int:
    from ..reporting import write_reports
    from .play import ScenarioError, play
    from .report import run_result

    if args.timeout is not None and not 0 < args.timeout <= MAX_TIMEOUT_S:
        raise UsageError(f"--timeout must be between 0 and {MAX_TIMEOUT_S:g} seconds")
    given = settings(args, os.environ, Path.cwd())
    picked = chosen(given.protocol, list(given.scenarios))
    if args.list:
        registry = {c.requirement.id: c.requirement for c in client_suite(given.protocol)}
        for scenario in picked:
            print(describe(scenario))
        print("\nrequirements:")
        for r in registry.values():
            print(f"  {r.id:16} {r.level.value.upper():6} {r.authority.value:8} {r.statement}  [{r.ref}]")
        return EXIT_OK
    argv = list(given.command)
    if not argv:
        raise UsageError(
            "give the client's command after --: client --protocol P -- COMMAND [ARGS...] "
            "(or client-command in conformance.toml)"
        )
    entries: tuple[baseline.Entry, ...] = ()
    if args.expected_failures is not None:
        try:
            entries = baseline.load(args.expected_failures)
            known = {c.requirement.id for c in client_suite(given.protocol)}
            baseline.check_ids(entries, known, args.expected_failures)
        except baseline.BaselineError as exc:
            raise UsageError(str(exc)) from None
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    folder = args.report_dir or Path("reports") / f"client-{given.protocol}-{stamp}"
    check_report_dir(folder)
    started_at = datetime.now(UTC).isoformat(timespec="seconds")
    started = time.monotonic()
    plays = []
    for scenario in picked:
        try:
            played = play(scenario, argv, given.timeout_s, given.seed)
        except ScenarioError as exc:
            print(f"error: scenario {scenario.name}: {exc}", file=sys.stderr)
            return EXIT_USAGE
        plays.append(played)
        if not args.quiet:
            line = verdict_line(*played)
            print(line, file=sys.stderr, flush=True)
            if args.verbose and not line.startswith("ok") and played[0].output:
                print("\n".join(f"     | {text}" for text in played[0].output.splitlines()), file=sys.stderr)
    result = run_result(given.protocol, argv, plays, started_at, time.monotonic() - started, given.seed)
    for res in result.results:
        baseline.judge(res, entries)
    write_reports(result, folder)
    tally = result.tally()["must"]
    print(
        f"client {given.protocol}: {result.verdict} ({tally['passed']} MUST passed, {tally['failed']} failed, "
        f"{tally['not verified']} not verified); reports in {folder}"
    )
    return result.exit_code
