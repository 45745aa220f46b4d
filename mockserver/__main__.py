"""``python -m mockserver``: serve the reference implementations on one loopback port."""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import secrets
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml
from aiohttp import web

from specs import heap
from specs.documents import PROTOCOLS, SpecError, load
from specs.program import __version__, program_name
from specs.serving import LoopUnavailable, add_loop_argument, run, stop_on_signals

from . import fixtures
from .api import ProtocolApi
from .app import APIS, RECORDER, create_app
from .chaos import ChaosError, load_document, parse_cli
from .config import DEFAULT_TOKENS, MockConfig
from .descriptor import DescriptorError, catalogue, resolve
from .gate import TOKEN_ENV, GateError, is_loopback
from .journal import DEFAULT_SIZE
from .stubs import StubError


def _token(value: str) -> tuple[str, str]:
    name, sep, token = value.partition("=")
    if not sep or not name or not token:
        raise argparse.ArgumentTypeError(f"expected NAME=TOKEN, got {value!r}")
    return name, token


def parser(prog: str | None = None) -> argparse.ArgumentParser:
    """``prog``: default, the name it was invoked by (``agent-mock`` or ``python -m mockserver``)."""
    p = argparse.ArgumentParser(prog=prog or program_name("mockserver"), description=__doc__)
    p.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8000, help="0 picks a free port (default 8000)")
    p.add_argument("--protocol", action="append", choices=sorted(PROTOCOLS), help="serve only these (repeatable)")
    p.add_argument(
        "--token",
        action="append",
        type=_token,
        metavar="NAME=TOKEN",
        help="Synapse identity (repeatable); default " + ", ".join(f"{k}={v}" for k, v in DEFAULT_TOKENS.items()),
    )
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--job-seconds", type=float, default=0.3, help="how long a Synapse chat job stays PROCESSING")
    p.add_argument("--stream-delay", type=float, default=0.0, help="seconds between streamed frames")
    p.add_argument("--fault", action="append", default=[], metavar="NAME", help="inject a named fault (repeatable)")
    add_loop_argument(p)
    p.add_argument("--list-faults", action="store_true", help="print the fault catalogue and exit")
    dev = p.add_argument_group(
        "for client developers",
        "chaos keeps the mock correct but unreliable (unlike --fault); the admin API is "
        "under /__mock/ (GET /__mock/ lists it)",
    )
    dev.add_argument("--chaos", metavar="FILE", type=Path, help="chaos rules from a YAML (or JSON) file")
    dev.add_argument(
        "--chaos-rule",
        action="append",
        default=[],
        metavar="RULE",
        help="one chaos rule, e.g. 'protocol=sgr-agent-core,error=429,rate=0.5' (repeatable)",
    )
    dev.add_argument("--chaos-seed", type=int, help="seed of the chaos draws (default: --seed)")
    dev.add_argument("--fixtures", metavar="FILE", type=Path, help="state to load before serving (YAML or JSON)")
    dev.add_argument(
        "--record",
        metavar="URL",
        help="forward every request to the real server at URL (its root) and record the exchanges as stubs",
    )
    dev.add_argument(
        "--record-to",
        metavar="FILE",
        type=Path,
        default=Path("recorded-stubs.yaml"),
        help="where --record writes the stubs when the mock stops (default recorded-stubs.yaml; serve it with --stubs)",
    )
    dev.add_argument(
        "--stubs",
        metavar="FILE",
        type=Path,
        help="stubs (answers instead of the handlers') and data stubs, YAML or JSON (GET /__mock/stubs/schema)",
    )
    dev.add_argument(
        "--journal",
        nargs="?",
        type=int,
        const=DEFAULT_SIZE,
        default=0,
        metavar="N",
        help=f"keep the last N exchanges for GET /__mock/journal (default N {DEFAULT_SIZE}; off without)",
    )
    dev.add_argument("--access-log", action="store_true", help="log each request: status, latency, operation")
    dev.add_argument("-v", "--verbose", action="store_true", help="also log request and response bodies")
    dev.add_argument(
        "--no-cors", dest="cors", action="store_false", help="no CORS headers, no preflights (the admin API has none)"
    )
    safety = p.add_argument_group("safety", "what keeps web pages out of the mock (docs/mock.md, threat model)")
    safety.add_argument(
        "--allowed-host",
        action="append",
        default=[],
        metavar="NAME",
        help="another name to answer to besides loopback and --host (repeatable; .example.org for a domain "
        "and its subdomains, * for any name: no DNS-rebinding guard)",
    )
    safety.add_argument(
        "--admin-token",
        metavar="TOKEN",
        help=f"require Authorization: Bearer TOKEN on every admin request (default ${TOKEN_ENV}; made up "
        "and printed when --host is not a loopback address)",
    )
    return p


class UsageError(Exception):
    """A setting that cannot be used; reported as ``error: ...`` with exit status 2."""


def _read(path: Path, what: str) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read the {what} file {path}: {getattr(exc, 'strerror', None) or exc}") from exc
    try:
        return fixtures.load_file_text(text, str(path))
    except fixtures.FixtureError as exc:
        raise UsageError(str(exc)) from exc


def developer_settings(args: argparse.Namespace, protocols: tuple[str, ...]) -> dict[str, Any]:
    """The chaos rules and fixtures the command line asks for, checked before anything is served."""
    operations = {pid: [op.operation_id for op in load(pid).operations()] for pid in protocols}
    rules: list[Any] = []
    seed = args.chaos_seed
    try:
        if args.chaos is not None:
            document = _read(args.chaos, "chaos")
            parsed, file_seed = load_document(document, operations)
            rules += [r.to_json() for r in parsed]
            seed = seed if seed is not None else file_seed
        for text in args.chaos_rule:
            rule = parse_cli(text)
            load_document([rule], operations)
            rules.append(rule)
        load_document(rules, operations)  # the count bound, over both sources
    except ChaosError as exc:
        raise UsageError(f"chaos: {exc}") from exc
    if args.journal < 0:
        raise UsageError("--journal N needs N >= 0")
    document = _read(args.fixtures, "fixtures") if args.fixtures is not None else None
    stubs = _read(args.stubs, "stubs") if args.stubs is not None else None
    if args.record is not None:
        if not args.record.startswith(("http://", "https://")):
            raise UsageError(f"--record needs the real server's URL (http:// or https://), got {args.record!r}")
        if args.fault or document is not None or stubs is not None:
            raise UsageError("--record forwards every request to the real server: no --fault, --fixtures or --stubs")
    return {
        "record": args.record,
        "stubs": stubs,
        "chaos": tuple(rules),
        "chaos_seed": seed,
        "fixtures": document,
        "journal": args.journal,
        "access_log": args.access_log,
        "verbose": args.verbose,
        "cors": args.cors,
    }


class CannotListen(Exception):
    """The server could not bind its address; a usage error, not a crash."""


async def serve(
    config: MockConfig,
    host: str,
    port: int,
    app: web.Application | None = None,
    record_to: Path | None = None,
    stop: asyncio.Event | None = None,
) -> None:
    """Serve until SIGINT or SIGTERM (or ``stop`` is set); a recording is written after the
    exchanges under way ended (within ``record.REST_S``), so whatever a client was answered is in it."""
    app = app or create_app(config)
    # a stop ends the answers still under way after 2 s (aiohttp's default waits 60 s for a stream)
    runner = web.AppRunner(app, access_log=None, shutdown_timeout=2.0)
    await runner.setup()
    heap.settle()  # the stores grow to hundreds of thousands of objects
    site = web.TCPSite(runner, host, port)
    try:
        await site.start()
    except OSError as exc:  # the port is taken, the host cannot be bound
        await runner.cleanup()
        raise CannotListen(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from exc
    stop = stop or stop_on_signals()  # before the mock says it listens: a stop right after is heard
    server = site._server
    sockets = getattr(server, "sockets", None) or []
    bound = sockets[0].getsockname()[1] if sockets else port
    kind = type(asyncio.get_running_loop()).__module__.split(".")[0]
    print(f"mockserver listening on http://{host}:{bound} ({', '.join(config.protocols)}; {kind} loop)", flush=True)
    if config.record:
        print(f"recording {config.record} to {record_to} (written when the mock stops)", flush=True)
    try:
        await stop.wait()
    finally:
        if RECORDER in app and record_to is not None:
            await site.stop()  # no new exchange begins; those under way may end
            await app[RECORDER].settle()
            apis: dict[str, ProtocolApi] = app[APIS]
            document = app[RECORDER].document(apis)
            written = record_to.with_name(record_to.name + ".part")  # never a half-written recording
            written.write_text(yaml.safe_dump(document, sort_keys=False, allow_unicode=True), encoding="utf-8")
            os.replace(written, record_to)
            print(f"wrote {len(document['stubs'])} recorded exchange(s) to {record_to}", flush=True)
        await runner.cleanup()


def choose_admin_token(given: str | None, host: str, environ: Mapping[str, str]) -> tuple[str | None, bool]:
    """The admin token (the option, else the environment) and whether it was made up here: a mock
    reachable from other machines never leaves its admin API open."""
    token = given if given is not None else environ.get(TOKEN_ENV) or None
    if token is None and not is_loopback(host):
        return secrets.token_urlsafe(24), True
    return token, False


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if args.list_faults:
        try:
            for fault in sorted(catalogue().values(), key=lambda f: f.name):
                what = "control: must pass" if fault.control else f"breaks {', '.join(fault.breaks)}"
                print(f"{fault.name:40} {fault.protocol:15} {what}: {fault.description}")
            sys.stdout.flush()
        except BrokenPipeError:  # `--list-faults | head` stopped reading: no traceback at exit
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    protocols = tuple(args.protocol or PROTOCOLS)
    admin_token, made_up = choose_admin_token(args.admin_token, args.host, os.environ)
    try:  # settle the configuration before serving, so only its own errors are reported as usage errors
        resolve(args.fault)
        for pid in protocols:
            load(pid)
        config = MockConfig(
            protocols=protocols,
            tokens=dict(args.token) if args.token else dict(DEFAULT_TOKENS),
            seed=args.seed,
            job_seconds=args.job_seconds,
            stream_delay=args.stream_delay,
            faults=tuple(args.fault),
            host=args.host,
            allowed_hosts=tuple(args.allowed_host),
            admin_token=admin_token,
            **developer_settings(args, protocols),
        )
        app = create_app(config)  # fixtures and rules meet the stores here, before the port is taken
    except KeyError as exc:
        print(f"error: {exc.args[0]}", file=sys.stderr)
        return 2
    except (SpecError, UsageError, GateError, DescriptorError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except fixtures.FixtureError as exc:
        print(f"error: fixtures: {exc}", file=sys.stderr)
        return 2
    except StubError as exc:
        print(f"error: stubs ({args.stubs}): {exc}", file=sys.stderr)
        return 2
    if config.access_log:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(asctime)s %(message)s"))
        access = logging.getLogger("mockserver.access")
        access.addHandler(handler)
        access.setLevel(logging.INFO)
        access.propagate = False
    if made_up:
        print(f"admin token (made up; choose one with --admin-token or {TOKEN_ENV}): {admin_token}", flush=True)
    try:
        run(serve(config, args.host, args.port, app, args.record_to), args.loop)
    except LoopUnavailable as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except CannotListen as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
