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

from conformance.settings import arguments as options
from conformance.settings import config
from conformance.settings.usage import UsageError, check_report_dir

from ..verdicts import baseline
from ..verdicts.requirements import Authority, Level
from ..verdicts.results import Status
from .judges import Judged, Play
from .requirements import client_requirements, client_suite
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
    options.add_protocol(
        p,
        extra="; all: each protocol in turn (the command, or each protocol's client-command, told which by "
        "CONFORMANCE_SCENARIO_PROTOCOL)",
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
    options.add_seed(p, "the mock's seed, ")
    options.add_config(
        p,
        "protocol, seed, client-command, client-scenario, client-timeout, client-report-dir, client-expected-failures",
    )
    options.add_report_dir(
        p,
        "reports/client-<protocol>-<timestamp>/",
        key="client-report-dir",
        extra="; with --protocol all, a folder per protocol in it",
    )
    options.add_expected_failures(p, key="client-expected-failures")
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
    """What the command line, the environment and the config file give the client mode for one
    protocol, resolved with run's precedence (conformance/settings/config.py declares the keys)."""

    protocol: str
    scenarios: tuple[str, ...]
    timeout_s: float
    seed: int
    command: tuple[str, ...]
    report_dir: Path | None = None
    """None: reports/client-<protocol>-<timestamp>/."""
    expected_failures: Path | None = None


def settings(args: argparse.Namespace, environ: Mapping[str, str], cwd: Path) -> list[Settings]:
    """Each protocol's settings: one, or every protocol's for ``--protocol all`` (a shared report
    folder then gets a folder per protocol, as ``run`` does)."""
    argv = list(args.client_command)
    if argv[:1] == ["--"]:
        argv = argv[1:]
    cli = {
        "protocol": args.protocol,
        "client_scenario": args.scenario,
        "client_timeout_s": args.timeout,
        "seed": args.seed,
        "client_command": argv or None,
        "client_report_dir": args.report_dir,
        "client_expected_failures": args.expected_failures,
    }
    given = config.Invocation(config.given(cli), config.from_env(environ), config.load(args.config, cwd, environ))
    protocols = given.protocols()
    several = len(protocols) > 1
    out = []
    for protocol in protocols:
        known = given.value(protocol, "client_expected_failures")
        out.append(
            Settings(
                protocol,
                tuple(given.value(protocol, "client_scenario")),
                float(given.value(protocol, "client_timeout_s")),
                int(given.value(protocol, "seed")),
                tuple(given.value(protocol, "client_command")),
                given.folder(protocol, "client_report_dir", several),
                Path(known) if known else None,
            )
        )
    return out


def _picked(every: list[Settings]) -> list[tuple[Settings, list[Scenario]]]:
    """Each protocol's scenarios. With several protocols a name is played where it exists (an
    unknown name is one no protocol has) and a protocol given no command is left out, said so."""
    if len(every) == 1:
        return [(every[0], chosen(every[0].protocol, list(every[0].scenarios)))]
    names = {name for one in every for name in one.scenarios}
    unknown = sorted(names - {s.name for one in every for s in scenarios(one.protocol)})
    if unknown:
        raise UsageError(f"no scenario {', '.join(unknown)} in any protocol; list them with: client --list")
    out = []
    for one in every:
        mine = [s for s in scenarios(one.protocol) if not one.scenarios or s.name in one.scenarios]
        if mine:
            out.append((one, mine))
    return out


def _baseline(
    path: Path | None, protocols: list[str], cache: dict[Path, tuple[baseline.Entry, ...]]
) -> tuple[baseline.Entry, ...]:
    """The entries of a client baseline, its ids checked against the client requirements of the
    protocols played (one file may serve them all)."""
    if path is None:
        return ()
    if path not in cache:
        try:
            entries = baseline.load(path)
            known = {c.requirement.id for pid in protocols for c in client_suite(pid)}
            baseline.check_ids(entries, known, path)
        except baseline.BaselineError as exc:
            raise UsageError(str(exc)) from None
        cache[path] = entries
    return cache[path]


def _list(picked: list[tuple[Settings, list[Scenario]]], several: bool) -> int:
    for one, mine in picked:
        if several:
            print(f"# {one.protocol}")
        for scenario in mine:
            print(describe(scenario))
        print("\nrequirements:")
        for r in client_requirements(one.protocol):
            print(f"  {r.id:16} {r.level.value.upper():6} {r.authority.value:8} {r.statement}  [{r.ref}]")
        if several:
            print()
    return EXIT_OK


def command(args: argparse.Namespace) -> int:
    from ..reporting import write_reports
    from .play import ScenarioError, play
    from .report import run_result

    if args.timeout is not None and not 0 < args.timeout <= MAX_TIMEOUT_S:
        raise UsageError(f"--timeout must be between 0 and {MAX_TIMEOUT_S:g} seconds")
    every = settings(args, os.environ, Path.cwd())
    several = len(every) > 1
    picked = _picked(every)
    if args.list:
        return _list(picked, several)
    runnable = [(one, mine) for one, mine in picked if one.command]
    if not runnable:
        raise UsageError(
            "give the client's command after --: client --protocol P -- COMMAND [ARGS...] "
            "(or client-command in conformance.toml)"
        )
    for one, _ in picked:
        if not one.command:
            print(f"client {one.protocol}: left out (no client-command for it)", file=sys.stderr)
    cache: dict[Path, tuple[baseline.Entry, ...]] = {}
    played_protocols = [one.protocol for one, _ in runnable]
    entries = {one.protocol: _baseline(one.expected_failures, played_protocols, cache) for one, _ in runnable}
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    folders = {}
    for one, _ in runnable:
        folders[one.protocol] = one.report_dir or Path("reports") / f"client-{one.protocol}-{stamp}"
        check_report_dir(folders[one.protocol])
    worst = EXIT_OK
    for one, mine in runnable:
        started_at = datetime.now(UTC).isoformat(timespec="seconds")
        started = time.monotonic()
        plays = []
        for scenario in mine:
            try:
                played = play(scenario, list(one.command), one.timeout_s, one.seed)
            except ScenarioError as exc:
                print(f"error: scenario {scenario.name}: {exc}", file=sys.stderr)
                return EXIT_USAGE
            plays.append(played)
            if not args.quiet:
                line = verdict_line(*played)
                print(line, file=sys.stderr, flush=True)
                if args.verbose and not line.startswith("ok") and played[0].output:
                    print("\n".join(f"     | {text}" for text in played[0].output.splitlines()), file=sys.stderr)
        result = run_result(one.protocol, list(one.command), plays, started_at, time.monotonic() - started, one.seed)
        for res in result.results:
            baseline.judge(res, entries[one.protocol])
        write_reports(result, folders[one.protocol])
        tally = result.tally()["must"]
        print(
            f"client {one.protocol}: {result.verdict} ({tally['passed']} MUST passed, {tally['failed']} failed, "
            f"{tally['not verified']} not verified); reports in {folders[one.protocol]}"
        )
        worst = max(worst, result.exit_code)
    if several:
        print(f"client: {'PASS' if worst == EXIT_OK else 'FAIL'} over {len(runnable)} protocols")
    return worst
