"""``python -m conformance proxy``: run the validation proxy until SIGINT/SIGTERM, then report."""

from __future__ import annotations

import argparse
import asyncio
import sys
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from specs.documents import PROTOCOLS
from specs.serving import LoopUnavailable, add_loop_argument, stop_on_signals

from ..settings import arguments as options
from ..verdicts.requirements import Level
from ..verdicts.results import Status

if TYPE_CHECKING:
    from .observer import Selection

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "proxy",
        help="validate live traffic: a reverse proxy that judges every exchange against the protocol",
    )
    p.add_argument("--protocol", required=True, choices=sorted(PROTOCOLS))
    p.add_argument("--upstream", required=True, help="the server's root URL; requests keep their paths")
    p.add_argument("--host", default="127.0.0.1", help="listen address (default loopback only)")
    p.add_argument("--port", type=int, default=8080)
    options.add_report_dir(p, "reports/proxy-<protocol>-<timestamp>/")
    p.add_argument(
        "--errors", action="store_true", help="name violated requirements in an X-Conformance-Violations answer header"
    )
    p.add_argument(
        "--token",
        action="append",
        default=[],
        help="a bearer token valid on the upstream (repeatable); any other must be refused",
    )
    p.add_argument("--timeout", type=float, default=30.0, help="seconds to connect, per read, per whole answer")
    p.add_argument("--stream-seconds", type=float, default=600.0, help="longest a stream is forwarded")
    p.add_argument("-q", "--quiet", action="store_true", help="no violation lines")
    p.add_argument(
        "--client-mode",
        action="store_true",
        help="for client developers: only violations the traffic showed fail the exit code "
        "(a requirement no exchange exercised is reported, not failed)",
    )
    p.add_argument("--only", action="append", metavar="ID_PREFIX", help="report only these requirements")
    p.add_argument("--skip", action="append", metavar="ID_PREFIX", help="leave these requirements out")
    p.add_argument("--level", choices=[lv.value for lv in Level], default="may", help="report this level and stricter")
    options.add_expected_failures(p)
    p.add_argument(
        "--har", type=Path, metavar="FILE", help="write the traffic as HAR 1.2 with the reports (last 1,000 exchanges)"
    )
    add_loop_argument(p)


def _console(quiet: bool) -> Any:
    def show(line: str) -> None:
        if not quiet:
            print(line, file=sys.stderr, flush=True)

    return show


def command(args: argparse.Namespace) -> int:
    from urllib.parse import urlsplit

    from specs import heap
    from specs.serving import run

    from .forward import ProxyConfig, new_observer
    from .report import write

    parts = urlsplit(args.upstream)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        print(f"error: --upstream {args.upstream!r} is not an http(s) URL", file=sys.stderr)
        return EXIT_USAGE
    if args.timeout <= 0 or args.stream_seconds <= 0:
        print("error: --timeout and --stream-seconds must be positive", file=sys.stderr)
        return EXIT_USAGE
    try:
        selection = _selection(args)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    directory = args.report_dir or Path("reports") / f"proxy-{args.protocol}-{stamp}"
    console = _console(args.quiet)
    config = ProxyConfig(
        protocol=args.protocol,
        upstream=args.upstream,
        tokens=tuple(args.token),
        errors=args.errors,
        timeout=args.timeout,
        stream_seconds=args.stream_seconds,
        report_dir=directory,
        console=console,
        selection=selection,
        har=args.har,
    )
    observer = new_observer(config)
    heap.settle()
    try:
        run(_serve(config, observer, args.host, args.port), args.loop)
    except LoopUnavailable as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except OSError as exc:
        print(f"error: cannot listen on {args.host}:{args.port}: {exc.strerror or exc}", file=sys.stderr)
        return EXIT_USAGE
    result = write(observer, directory)
    counts = {s: sum(1 for r in result.results if r.status is s) for s in Status}
    har = f"; HAR in {args.har}" if args.har else ""
    print(
        f"{args.protocol} proxy: {observer.exchanges} exchanges, {observer.violations} violations; "
        f"{counts[Status.PASSED]} requirements passed, {counts[Status.FAILED]} failed, "
        f"{counts[Status.NOT_VERIFIED]} not verified (not observed); "
        f"reports in {directory}{har}",
        flush=True,
    )
    # the suite's rule, as results.json and junit.xml state it: 0 only when every MUST passed (a MUST
    # no exchange exercised is not passed), 1 otherwise; in client mode, 0 unless observed traffic
    # broke a MUST (or nothing that gates was exercised at all)
    return result.exit_code


def _selection(args: argparse.Namespace) -> Selection:
    """The requirements to report, as ``run`` selects them; a usage error names what is wrong."""
    from ..run.suites import suite
    from ..verdicts import baseline
    from .document import client_registry
    from .observer import Selection

    registered = [c.requirement for c in suite(args.protocol).registry] + [
        c.requirement for c in client_registry(args.protocol)
    ]
    entries: tuple[baseline.Entry, ...] = ()
    if args.expected_failures is not None:
        try:
            entries = baseline.load(args.expected_failures)
            baseline.check_ids(entries, {r.id for r in registered}, args.expected_failures)
        except baseline.BaselineError as exc:
            raise ValueError(str(exc)) from None
    selection = Selection(
        only=tuple(args.only or ()),
        skip=tuple(args.skip or ()),
        level=Level(args.level),
        expected_failures=entries,
        client_mode=args.client_mode,
    )
    if not any(selection(r) for r in registered):
        raise ValueError(f"--only/--skip/--level select no requirement of {args.protocol}")
    return selection


async def _serve(config: Any, observer: Any, host: str, port: int) -> None:
    from .forward import serve

    stop = stop_on_signals()
    loop = asyncio.get_running_loop()

    def listening(bound: int) -> None:
        kind = type(loop).__module__.split(".")[0]
        print(
            f"proxy for {observer.protocol_id} on http://{host}:{bound} -> {observer.upstream} ({kind} loop)",
            flush=True,
        )

    await serve(config, observer, host, port, stop, listening)
