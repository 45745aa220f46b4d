"""``python -m conformance run --protocol ID|all ...``: parse, run, write reports, exit 0/1/2."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections import Counter
from collections.abc import Callable, Generator
from contextlib import ExitStack, closing
from datetime import datetime
from pathlib import Path

from conformance import __version__
from conformance.check.guard import STOPPED_ANSWERING
from conformance.cli.completion import SHELLS
from conformance.cli.judge import HELP as JUDGE_HELP
from conformance.cli.judge import Parser
from conformance.cli.judge import add_arguments as add_judge_arguments
from conformance.cli.judge import command as judge_command
from conformance.client import cli as client_cli
from conformance.proxy import cli as proxy_cli
from conformance.run.events import EventHandler
from conformance.run.options import PHASE_NAMES, RunOptions
from conformance.run.shards import Shard
from conformance.settings import arguments, config
from conformance.settings.usage import UsageError, check_report_dir
from conformance.verdicts import baseline
from conformance.verdicts.requirements import Level
from conformance.verdicts.results import RunResult, Status
from specs.documents import PROTOCOLS, SpecError, load

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130
_VERDICT = {EXIT_OK: "PASS", EXIT_INTERRUPTED: "INTERRUPTED"}


def _verdict(code: int, colour: bool = False) -> str:
    """PASS, FAIL or INTERRUPTED; coloured on a terminal (progress.wants_colour)."""
    from conformance.cli.progress import paint

    return paint(_VERDICT.get(code, "FAIL"), colour)


def parser(prog: str = "python -m conformance") -> argparse.ArgumentParser:
    """``prog`` is the name the program was invoked by (launch.py), in --version and usage lines."""
    p = Parser(prog=prog, description="Conformance suite for AI-agent HTTP APIs")
    p.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = p.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run a protocol's requirements against a target")
    arguments.add_protocol(run)
    arguments.add_config(run)
    for key in ("base-url", "token", "second-token"):
        arguments.add(run, key)
    arguments.add_report_dir(run, "reports/<protocol>-<timestamp>/")
    arguments.add_seed(run)
    for key in ("depth", "max-examples", "timeout", "level"):
        arguments.add(run, key)
    run.add_argument("--profile", help="a document profile, e.g. 'upstream' for neuro-san's /api/v1/list")
    arguments.add(run, "budget")
    run.add_argument(
        "--shard",
        type=_shard,
        metavar="K/N",
        help="run shard K of N of each protocol's work (merge the N report dirs with 'merge')",
    )
    run.add_argument(
        "--example-db",
        metavar="DIR|redis://HOST:PORT/N",
        help="keep and replay Hypothesis examples there (shared by runs, runners and shards)",
    )
    run.add_argument(
        "--example-db-readonly",
        action="store_true",
        default=None,
        help="replay from --example-db but write nothing to it (pull requests)",
    )
    for key in ("only", "skip", "requirements"):
        arguments.add(run, key)
    run.add_argument("--phase", dest="phases", action="append", choices=PHASE_NAMES, help="limit to a phase")
    run.add_argument(
        "--jobs",
        type=int,
        metavar="N",
        help="protocols run at once, each in its own process (default 0: one per core, at most one per "
        "protocol; 1: one after another in this process)",
    )
    run.add_argument("--target-name", help="the implementation under test, named in the reports")
    run.add_argument("--target-version", help="its version, named in the reports")
    arguments.add(run, "sign-key")
    run.add_argument("-q", "--quiet", action="store_true", help="no progress lines")
    run.add_argument(
        "--progress",
        choices=("auto", "bars", "lines"),
        default="auto",
        help="bars per phase with colour (auto: on a terminal, not under CI or TERM=dumb) or plain lines",
    )
    run.add_argument("-v", "--verbose", action="store_true", help="print each failure's evidence and curl line")
    run.add_argument(
        "--events", type=Path, metavar="FILE", help="write every run event as a JSON line (schema: events.schema.json)"
    )
    arguments.add_expected_failures(run)
    joined = sub.add_parser("merge", help="merge the reports of a campaign's shards (--shard K/N) into one run's")
    joined.add_argument("reports", type=Path, nargs="+", metavar="DIR", help="each shard's --report-dir")
    joined.add_argument(
        "-o", "--report-dir", type=Path, help="where the merged reports go (default reports/merged-<timestamp>/)"
    )
    joined.add_argument(
        "--sign-key", type=Path, metavar="FILE", help="sign the merged reports with this Ed25519 private key"
    )
    base = sub.add_parser("baseline", help="write an --expected-failures file from a run's results.json")
    base.add_argument("report_dir", type=Path, metavar="REPORT_DIR")
    base.add_argument("-o", "--output", default="expected-failures.yaml", help="file to write ('-': stdout)")
    base.add_argument("--ids-only", action="store_true", help="list ids only (any failure of each is expected)")
    check = sub.add_parser("selfcheck", help="run the suite against the mock with each named fault")
    check.add_argument("--protocol", choices=[*sorted(PROTOCOLS), "all"], default="all")
    check.add_argument("--fault", action="append", default=[], help="only these faults")
    check.add_argument("--report-dir", type=Path, help="default reports/selfcheck-<timestamp>/")
    check.add_argument(
        "--clients",
        action="store_true",
        help="prove the client requirements instead: each broken client of the catalogue caught, each fair one "
        "passing (docs/client.md)",
    )
    check.add_argument(
        "--workers",
        type=int,
        default=0,
        help="faults checked at once, each in its own process (default: one per core, at most 4)",
    )
    proxy_cli.add_parser(sub)
    client_cli.add_parser(sub)
    req = sub.add_parser("requirements", help="list the registered requirements")
    req.add_argument("--protocol", choices=[*sorted(PROTOCOLS), "all"], default="all")
    req.add_argument("--format", choices=["text", "json"], default="text")
    req.add_argument(
        "--sets", action="store_true", help="list the frozen requirement sets this kit carries (run --requirements SET)"
    )
    again = sub.add_parser(
        "replay",
        help="run each finding's calls from a fresh state again: reproduced, not reproduced or inconclusive",
    )
    again.add_argument("report", type=Path, metavar="REPORT_DIR|results.json")
    again.add_argument("--id", action="append", default=[], metavar="ID_PREFIX", help="only these requirements")
    again.add_argument("--base-url", default="", help="send to this target instead of the recorded one")
    again.add_argument("--timeout", type=float, default=10.0)
    _credential_options(again, "the calls")
    add_judge_arguments(sub.add_parser("judge", help=JUDGE_HELP))
    check_report = sub.add_parser(
        "verify",
        help="re-check a report's certificate (nothing edited, same documents); with --base-url, run it again",
    )
    check_report.add_argument("report", type=Path, metavar="REPORT_DIR|results.json")
    check_report.add_argument(
        "--base-url", default="", help="run the suite again as recorded against this URL and compare every verdict"
    )
    check_report.add_argument(
        "--public-key",
        type=Path,
        metavar="FILE",
        help="require the report's signature by this Ed25519 public key (PEM): without it, integrity only",
    )
    _credential_options(check_report, "the re-run")
    compared = sub.add_parser(
        "diff", help="what changed between two reports: verdicts, findings, requirements (exit 1: one got worse)"
    )
    compared.add_argument("old", type=Path, metavar="OLD", help="the earlier report folder (or its results.json)")
    compared.add_argument("new", type=Path, metavar="NEW", help="the later one")
    compared.add_argument("--format", choices=["text", "markdown", "json"], default="text")
    over_time = sub.add_parser("history", help="one line per report folder, oldest first: counts and what changed")
    over_time.add_argument("reports", type=Path, nargs="+", metavar="DIR", help="report folders of one protocol")
    over_time.add_argument("--format", choices=["text", "markdown"], default="text")
    shells = sub.add_parser(
        "completion", help='print a shell completion script, e.g. eval "$(agent-conformance completion bash)"'
    )
    shells.add_argument("shell", choices=SHELLS)
    keys = sub.add_parser("keygen", help="write an Ed25519 key pair to sign reports with (run --sign-key)")
    keys.add_argument(
        "--out", type=Path, required=True, metavar="PREFIX", help="writes PREFIX.key (private, 0600) and PREFIX.pub"
    )
    return p


def _credential_options(parser: argparse.ArgumentParser, what: str) -> None:
    """A report names the run's tokens, never holds them: they are given again."""
    parser.add_argument(
        "--token", help=f"bearer token for {what} (else $CONFORMANCE_TOKEN or $TOKEN; a report names it ${{TOKEN}})"
    )
    parser.add_argument(
        "--second-token", help=f"a second user's token for {what} (else $CONFORMANCE_SECOND_TOKEN or $SECOND_TOKEN)"
    )


def _shard(text: str) -> Shard:
    try:
        return Shard.parse(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc).removeprefix("--shard ")) from None


def _stderr_line(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def run_command(args: argparse.Namespace) -> int:
    from conformance.cli.progress import FailureEvidence, ProgressBars, ProgressLines, wants_bars
    from conformance.reporting.ndjson import EventStream

    environ = os.environ
    given = config.Invocation(
        config.given(vars(args)), config.from_env(environ), config.load(args.config, Path.cwd(), environ)
    )
    try:
        given.protocol()
    except UsageError as exc:  # the argparse-style line a missing required option gets
        prog = f"{args.prog} run"
        print(f"{prog}: error: {exc} (see {prog} --help)", file=sys.stderr)
        return EXIT_USAGE
    jobs = given.jobs()
    runs = given.runs()
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    folders = {o.protocol: o.report_dir or Path("reports") / f"{o.protocol}-{stamp}" for o in runs}
    for folder in folders.values():  # refused now, not after the whole run
        check_report_dir(folder)
    with ExitStack() as stack:
        handlers: list[EventHandler] = []
        write: Callable[[str], None] = _stderr_line
        if args.quiet:
            pass
        elif args.progress == "bars" or (args.progress == "auto" and wants_bars(sys.stderr, environ)):
            from rich.console import Console

            bars = ProgressBars(Console(stderr=True, force_terminal=True if args.progress == "bars" else None))
            handlers.append(stack.enter_context(bars))
            write = bars.write  # above the bars, unwrapped (a print to stderr would be wrapped by them)
        else:
            handlers.append(ProgressLines(_stderr_line))
        if args.verbose:
            handlers.append(FailureEvidence(write))
        if args.events:
            try:
                args.events.parent.mkdir(parents=True, exist_ok=True)  # made for it, as a report folder is
                stream = stack.enter_context(args.events.open("w", encoding="utf-8"))
            except OSError as exc:
                print(f"error: cannot write --events {args.events}: {exc.strerror or exc}", file=sys.stderr)
                return EXIT_USAGE
            handlers.append(EventStream(stream))
        return _run_protocols(runs, folders.__getitem__, handlers, jobs)


def _run_protocols(
    runs: list[RunOptions], report_dir: Callable[[str], Path], handlers: list[EventHandler], jobs: int
) -> int:
    from conformance.cli.progress import wants_colour
    from conformance.reporting import ReportFiles

    worst = EXIT_OK
    colour = wants_colour(sys.stdout, os.environ)
    keys = {o.protocol: o.sign_key for o in runs}
    reports = ReportFiles(report_dir, keys.__getitem__)
    workers = 1
    if len(runs) > 1 and jobs != 1:
        # imported only here: the cases a run draws depend on what its process imported before it
        # (a one-protocol run against the real neuro-san server found one finding fewer with
        # multiprocessing imported first), so a one-protocol run imports what it always did
        from conformance.engine.parallel import workers_for

        workers = workers_for(jobs, len(runs))
    if workers > 1:
        from conformance.engine.parallel import ParallelRuns

        results = ParallelRuns(runs, [*handlers, reports], reports, workers).results()
    else:
        results = _one_by_one(runs, [*handlers, reports], reports)
    interrupted_by = ""
    with closing(results):  # an interrupted loop ends the runs too (parallel: no worker left behind)
        for options, result in zip(runs, results, strict=True):
            pid = options.protocol
            worst = max(worst, result.exit_code)
            if result.fatal:  # nothing was tested: one error line, no verdict, no report (ReportFiles)
                print(f"error: {pid}: {result.fatal}", file=sys.stderr, flush=True)
                continue
            directory = reports.written[-1][1]
            tally = result.tally()
            must = tally["must"]
            advice = sum(r.status is Status.ADVICE for r in result.results)
            print(
                f"{pid}: {_verdict(result.exit_code, colour)} - MUST {must['passed']} passed, "
                f"{must['failed']} failed, {must['blocked']} blocked, {must[Status.NOT_VERIFIED.value]} not verified, "
                f"{must['error']} errors; "
                + (f"{advice} advice (practice, not the document); " if advice else "")
                + (
                    f"scored against {result.requirement_set} ({len(result.unscored)} newer not scored); "
                    if result.requirement_set
                    else ""
                )
                + f"{len(result.results)} requirements in {result.duration_s:.1f} s; "
                + (
                    f"{sum(r.baseline == 'expected' for r in result.results)} expected failures, "
                    f"{len(result.stale)} stale; "
                    if options.expected_failures
                    else ""
                )
                + f"reports in {directory}",
                flush=True,
            )
            for res in result.stale:
                print(
                    f"{pid}: {res.requirement.id} is stale: --expected-failures lists it but it passed; "
                    "remove the entry",
                    file=sys.stderr,
                )
            if result.stopped == STOPPED_ANSWERING:  # what it did, once, beside the verdicts that say so
                print(f"{pid}: {STOPPED_ANSWERING}: {result.stats.get('stopped_answering', '')}", file=sys.stderr)
            if result.stopped == "interrupted" and not interrupted_by:
                interrupted_by = pid
                # in parallel the protocols after it were running too: each line above says how far
                last = options is runs[-1] or workers > 1
                rest = "" if last else "; the protocols after it were not run"
                print(f"{pid}: interrupted{rest}", file=sys.stderr)
    written = reports.written
    parents = {directory.parent for _, directory in written}
    if len(written) > 1 and len(parents) == 1:  # one summary, JUnit file and page beside the protocols'
        from conformance.reporting.combined import write_combined

        root = parents.pop()
        write_combined([r for r, _ in written], root, {r.protocol: d.name for r, d in written})
        print(_closing_line([r for r, _ in written], reports.unusable, root / "report.html", colour), flush=True)
    return worst


def _closing_line(runs: list[RunResult], unusable: list[RunResult], page: Path, colour: bool = False) -> str:
    """One line for a run of several protocols: how the tested ones came out, each protocol's word,
    the page, and those whose target was unusable (their error lines above say why)."""
    each = ", ".join(f"{r.protocol} {_verdict(r.exit_code, colour)}" for r in runs)
    worst = max(r.exit_code for r in runs)
    untested = f"; not tested (target error above): {', '.join(r.protocol for r in unusable)}" if unusable else ""
    every = "" if unusable else "all "
    return f"{every}{len(runs)} protocols: {_verdict(worst, colour)} ({each}); combined report {page}{untested}"


def _one_by_one(
    runs: list[RunOptions], handlers: list[EventHandler], reports: EventHandler
) -> Generator[RunResult, None, None]:
    """The protocols in turn, in this process; after an interrupt the rest are reported not run."""
    from conformance.engine.runner import not_run, run

    interrupted_by = ""
    for options in runs:
        if interrupted_by:  # reported, every requirement not verified, so the combined report holds it too
            yield not_run(options, [reports], "interrupted", f"the run was interrupted during {interrupted_by}")
            continue
        result = run(options, handlers)
        if result.stopped == "interrupted":
            interrupted_by = options.protocol
        yield result


def merge_command(args: argparse.Namespace) -> int:
    from conformance.evidence.merge import check_campaign, load, merge
    from conformance.reporting import write_reports

    if args.sign_key is not None:  # refused now, not after the merge
        from conformance.reporting.signature import SignatureError, private_key

        try:
            private_key(args.sign_key)
        except SignatureError as exc:
            raise UsageError(f"--sign-key: {exc}") from None
    found = load(args.reports)
    runs = []
    for pid in sorted(found):
        count = check_campaign(found[pid])
        runs.append((merge(found[pid]), count))
    root = args.report_dir or Path("reports") / f"merged-{datetime.now().strftime('%Y%m%d-%H%M%S')}"
    check_report_dir(root)
    from conformance.cli.progress import wants_colour

    colour = wants_colour(sys.stdout, os.environ)
    worst = EXIT_OK
    for run, count in runs:
        directory = root / run.protocol if len(runs) > 1 else root
        write_reports(run, directory, args.sign_key)
        tally = run.tally()["must"]
        print(
            f"{run.protocol}: {_verdict(run.exit_code, colour)} - {count} shards merged; MUST {tally['passed']} "
            f"passed, {tally['failed']} failed, {tally['blocked']} blocked, {tally[Status.NOT_VERIFIED.value]} not "
            "verified, "
            f"{tally['error']} errors; "
            f"reports in {directory}",
            flush=True,
        )
        worst = max(worst, run.exit_code)
    if len(runs) > 1:
        from conformance.reporting.combined import write_combined

        write_combined([r for r, _ in runs], root, {r.protocol: r.protocol for r, _ in runs})
    return worst


def replay_command(args: argparse.Namespace) -> int:
    from conformance.check.credentials import Credentials
    from conformance.evidence.replay import INCONCLUSIVE, NOT_REPRODUCED, REPRODUCED, ReplayError, load_report, replay

    try:
        report = load_report(args.report)
        credentials = Credentials.from_environment(args.token, args.second_token)
        outcomes = replay(report, only=args.id, base_url=args.base_url, timeout=args.timeout, credentials=credentials)
    except ReplayError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if not outcomes:
        which = f" for --id {', '.join(args.id)}" if args.id else ""
        print(f"nothing to replay: the report records no failure{which}")
        return EXIT_OK
    for o in outcomes:
        status = f"HTTP {o.status if o.status is not None else 'none'}, recorded {o.recorded_status}"
        print(f"{o.verdict.upper():15} {o.key}  ({status}){': ' + o.detail[:300] if o.detail else ''}")
    counts = {v: sum(o.verdict == v for o in outcomes) for v in (REPRODUCED, NOT_REPRODUCED, INCONCLUSIVE)}
    print(
        f"replay: {len(outcomes)} findings: {counts[REPRODUCED]} reproduced, {counts[NOT_REPRODUCED]} not reproduced, "
        f"{counts[INCONCLUSIVE]} inconclusive"
    )
    # 0 only when no finding came back and every one could tell (inconclusive is not fixed)
    return EXIT_OK if counts[NOT_REPRODUCED] == len(outcomes) else EXIT_FAILED


def verify_command(args: argparse.Namespace) -> int:
    from conformance.check.credentials import Credentials
    from conformance.evidence.verify import VerifyError, check_files, check_signature, rerun

    try:
        checked, signed = check_files(args.report), check_signature(args.report, args.public_key)
        for note in [*checked.notes, *signed.notes]:
            print(f"ok: {note}")
        for problem in checked.problems:
            print(f"EDITED: {problem}")
        for problem in signed.problems:
            print(f"NOT SIGNED: {problem}")
        problems = len(checked.problems) + len(signed.problems)
        if problems:
            what = "certified" if not args.public_key else "signed by --public-key"
            print(f"verify: {problems} problem(s): the report is not the one that was {what}")
            return EXIT_FAILED
        if args.public_key:
            print("verify: the report is intact and signed by --public-key")
        else:  # said plainly: the digests alone prove nothing against whoever edits the report
            print(
                "verify: the report is intact (integrity only: whoever edits a report can compute its digests "
                "again; --public-key checks who signed it)"
            )
        if not args.base_url:
            return EXIT_OK
        credentials = Credentials.from_environment(args.token, args.second_token)
        changed, total = rerun(args.report, args.base_url, credentials)
    except VerifyError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    for line in changed:
        print(f"CHANGED: {line}")
    print(
        f"verify: {total - len(changed)}/{total} verdicts reproduced" + (f"; {len(changed)} changed" if changed else "")
    )
    return EXIT_OK if not changed else EXIT_FAILED


def diff_command(args: argparse.Namespace) -> int:
    from conformance.evidence.diff import DiffError, compare, load, render_json, render_markdown, render_text

    try:
        diff = compare(load(args.old), load(args.new))
    except DiffError as exc:
        raise UsageError(str(exc)) from None
    render = {"text": render_text, "markdown": render_markdown, "json": render_json}[args.format]
    sys.stdout.write(render(diff))
    return EXIT_FAILED if diff.exit_code else EXIT_OK


def history_command(args: argparse.Namespace) -> int:
    from conformance.evidence.diff import DiffError, history, render_history_markdown, render_history_text

    try:
        runs = history(args.reports)
    except DiffError as exc:
        raise UsageError(str(exc)) from None
    sys.stdout.write((render_history_markdown if args.format == "markdown" else render_history_text)(runs))
    return EXIT_OK


def keygen_command(args: argparse.Namespace) -> int:
    from conformance.reporting.signature import SignatureError, fingerprint, keygen, public_key

    try:
        private, public = keygen(args.out)
    except SignatureError as exc:
        raise UsageError(str(exc)) from None
    print(f"keygen: {private} (private: keep it secret, sign with run --sign-key {private})")
    print(f"keygen: {public} (public: give it to whoever verifies, verify --public-key {public})")
    print(f"keygen: fingerprint {fingerprint(public_key(public))}")
    return EXIT_OK


def completion_command(args: argparse.Namespace) -> int:
    from conformance.cli.completion import script

    # the console script is what a shell completes: `python -m conformance` is no command name
    name = args.prog if " " not in args.prog else "agent-conformance"
    sys.stdout.write(script(parser(name), args.shell, name))
    return EXIT_OK


def requirements_command(args: argparse.Namespace) -> int:
    from conformance.client.requirements import client_suite
    from conformance.run.suites import all_suites, suite
    from conformance.verdicts.requirements import describe

    if args.sets:
        return _sets(args)
    listed = []
    suites = all_suites() if args.protocol == "all" else {args.protocol: suite(args.protocol)}
    for pid, protocol_suite in suites.items():
        spec = load(pid)
        for check in [*protocol_suite.registry, *client_suite(pid)]:
            r = check.requirement
            if args.format == "json":
                listed.append(describe(r, spec))
            else:
                print(f"{r.id:18} {r.level.value.upper():6} {r.authority.value:8} {r.phase:8} {r.statement}  [{r.ref}]")
    if args.format == "json":
        print(json.dumps(listed, indent=2, ensure_ascii=False))
    return EXIT_OK


def _sets(args: argparse.Namespace) -> int:
    """``requirements --sets``: each released set, its size by level, and what today's registry added since."""
    from conformance.run.suites import suite
    from conformance.verdicts.sets import released

    sets = [s for s in released().values() if args.protocol in ("all", s.protocol)]
    if args.format == "json":
        print(json.dumps([s.manifest() for s in sets], indent=2))
        return EXIT_OK
    for rset in sets:
        levels = Counter(f.level.value for f in rset.requirements.values())
        newer = [c.requirement.id for c in suite(rset.protocol).registry if c.requirement.id not in rset]
        counts = ", ".join(f"{levels[lv.value]} {lv.value.upper()}" for lv in Level if levels[lv.value])
        print(
            f"{rset.name:28} {len(rset.requirements):3} requirements ({counts}), released with {rset.suite_version}; "
            f"{len(newer)} newer, not scored under it"
        )
    return EXIT_OK


def baseline_command(args: argparse.Namespace) -> int:
    try:
        text = baseline.from_reports(args.report_dir, with_keys=not args.ids_only)
    except baseline.BaselineError as exc:
        raise UsageError(str(exc)) from None
    if args.output == "-":
        sys.stdout.write(text)
        return EXIT_OK
    try:
        Path(args.output).write_text(text, encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot write {args.output}: {exc.strerror or exc}") from None
    print(f"baseline: {text.count('- id: ')} expected failures written to {args.output}")
    return EXIT_OK


def selfcheck_command(args: argparse.Namespace) -> int:
    from conformance.run.targets import embedded
    from conformance.selfcheck.catalogue import default_workers, run_catalogue, write_catalogue

    if args.clients:
        from conformance.client.selfcheck import run_catalogue as run_clients

        protocols = sorted(PROTOCOLS) if args.protocol == "all" else [args.protocol]
        proved = run_clients(protocols, lambda line: print(line, file=sys.stderr, flush=True))
        held = sum(o.caught for o in proved)
        print(f"selfcheck --clients: {held} of {len(proved)} broken clients caught and fair clients passed")
        return EXIT_OK if proved and held == len(proved) else EXIT_FAILED

    faults = [
        f
        for f in sorted(embedded().faults(), key=lambda f: (f.protocol, f.name))
        if (args.protocol == "all" or f.protocol == args.protocol) and (not args.fault or f.name in args.fault)
    ]
    if not faults:
        print("error: no fault matches", file=sys.stderr)
        return EXIT_USAGE
    if args.workers < 0:
        print("error: --workers must be 0 (one per core) or more", file=sys.stderr)
        return EXIT_USAGE
    workers = min(args.workers or default_workers(), len(faults))
    outcomes = run_catalogue(faults, lambda line: print(line, file=sys.stderr, flush=True), workers)
    directory = args.report_dir or Path("reports") / f"selfcheck-{datetime.now().strftime('%Y%m%d-%H%M%S')}"
    write_catalogue(outcomes, directory)
    caught = sum(o.caught for o in outcomes)
    print(f"selfcheck: {caught} of {len(outcomes)} faults caught; catalogue in {directory}")
    return EXIT_OK if caught == len(outcomes) else EXIT_FAILED


def main(argv: list[str] | None = None, prog: str = "python -m conformance") -> int:
    try:
        args = parser(prog).parse_args(argv)
        args.prog = prog
    except SystemExit as exc:  # argparse exits 2 on usage errors already; keep 0 for --help
        return int(exc.code or 0)
    try:
        commands = {
            "requirements": requirements_command,
            "selfcheck": selfcheck_command,
            "proxy": proxy_cli.command,
            "client": client_cli.command,
            "baseline": baseline_command,
            "replay": replay_command,
            "judge": judge_command,
            "merge": merge_command,
            "verify": verify_command,
            "keygen": keygen_command,
            "diff": diff_command,
            "history": history_command,
            "completion": completion_command,
        }
        code = commands.get(args.command, run_command)(args)
        sys.stdout.flush()  # a closed pipe surfaces here, inside the handler, not at interpreter exit
        return code
    except (SpecError, UsageError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:  # `... | head` stopped reading: not an error, and no traceback at exit
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
