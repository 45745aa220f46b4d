"""``python -m mockserver``: serve the reference implementations on one loopback port."""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import signal
import sys

from aiohttp import web

from conformance.specs import PROTOCOLS, SpecError, load

from .app import create_app
from .config import DEFAULT_TOKENS, MockConfig
from .faults import catalogue, resolve


def _token(value: str) -> tuple[str, str]:
    name, sep, token = value.partition("=")
    if not sep or not name or not token:
        raise argparse.ArgumentTypeError(f"expected NAME=TOKEN, got {value!r}")
    return name, token


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m mockserver", description=__doc__)
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
    p.add_argument("--list-faults", action="store_true", help="print the fault catalogue and exit")
    return p


class CannotListen(Exception):
    """The server could not bind its address; a usage error, not a crash."""


async def serve(config: MockConfig, host: str, port: int) -> None:
    runner = web.AppRunner(create_app(config), access_log=None)
    await runner.setup()
    # The stores grow to hundreds of thousands of objects: move what start-up built out of the
    # collector's sight and collect the young generation less often, or full collections over the
    # store dominate tail latency (bench/README.md, where the time goes).
    gc.collect()
    gc.freeze()
    gc.set_threshold(50_000, 20, 20)
    site = web.TCPSite(runner, host, port)
    try:
        await site.start()
    except OSError as exc:  # the port is taken, the host cannot be bound
        await runner.cleanup()
        raise CannotListen(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from exc
    server = site._server
    sockets = getattr(server, "sockets", None) or []
    bound = sockets[0].getsockname()[1] if sockets else port
    print(f"mockserver listening on http://{host}:{bound} ({', '.join(config.protocols)})", flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    try:
        await stop.wait()
    finally:
        await runner.cleanup()


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if args.list_faults:
        try:
            for fault in sorted(catalogue().values(), key=lambda f: f.name):
                print(f"{fault.name:40} {fault.protocol:15} breaks {', '.join(fault.breaks)}: {fault.description}")
            sys.stdout.flush()
        except BrokenPipeError:  # `--list-faults | head` stopped reading: no traceback at exit
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    config = MockConfig(
        protocols=tuple(args.protocol or PROTOCOLS),
        tokens=dict(args.token) if args.token else dict(DEFAULT_TOKENS),
        seed=args.seed,
        job_seconds=args.job_seconds,
        stream_delay=args.stream_delay,
        faults=tuple(args.fault),
    )
    try:  # settle the configuration before serving, so only its own errors are reported as usage errors
        resolve(config.faults)
        for pid in config.protocols:
            load(pid)
    except KeyError as exc:
        print(f"error: {exc.args[0]}", file=sys.stderr)
        return 2
    except SpecError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    try:
        asyncio.run(serve(config, args.host, args.port))
    except CannotListen as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
