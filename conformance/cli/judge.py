"""``conformance judge``: one answer judged by a named judgment, as a finding's ``sh`` script asks.

A script calls it once per answer it compares, so it is kept apart from ``cli``: ``launch.entry``
comes here straight, and a call imports the judgments alone (about a tenth of what importing the
whole command line costs: its run options pull in Hypothesis, httpx and every protocol's suite).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import NoReturn

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2

HELP = (
    "judge one answer by a named judgment, as a finding's sh script asks: exit 0 it shows the problem "
    "(prints shows: ...), 1 the judgment holds (holds: ...), 2 no such judgment"
)


class Parser(argparse.ArgumentParser):
    """The command line's parser: a mistake is one line, not the whole usage block."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("judgment", help="the finding's judgment (results.json: judgment), e.g. pages.numbers")
    p.add_argument(
        "--facts", default="{}", help="what the run knew, as JSON (results.json: facts), or @FILE holding it"
    )
    p.add_argument("--method", default="GET", help="the request's method")
    p.add_argument("--url", required=True, help="the request's URL")
    p.add_argument("--status", type=int, required=True, help="the answer's status")
    p.add_argument("--headers", type=Path, help="the answer's headers as curl -D wrote them")
    p.add_argument("--body", type=Path, help="the answer's body")


def command(args: argparse.Namespace) -> int:
    from conformance.check.judgments import Seen, UnknownJudgment, judge

    try:
        text = Path(args.facts[1:]).read_text("utf-8") if args.facts.startswith("@") else args.facts
        facts = json.loads(text)
        headers = _curl_headers(args.headers.read_text("latin-1")) if args.headers else {}
        body = args.body.read_bytes() if args.body else b""
        problems = judge(args.judgment, Seen(args.method, args.url, args.status, headers, body), facts)
    except UnknownJudgment:
        print(f"error: no judgment {args.judgment!r} in this kit", file=sys.stderr)
        return EXIT_USAGE
    except KeyError as exc:  # the facts of another judgment, or edited: said, not a traceback
        print(f"error: the facts hold no {exc}, which the judgment {args.judgment} reads", file=sys.stderr)
        return EXIT_USAGE
    except (OSError, ValueError, AttributeError, TypeError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    # "shows:" or "holds:" first: a script tells the kit's answer from an interpreter that failed
    if problems:
        print(f"shows: {args.judgment}: {problems[0]}")
        return EXIT_OK
    print(f"holds: the judgment {args.judgment} holds on this answer (HTTP {args.status})")
    return EXIT_FAILED


def _curl_headers(text: str) -> dict[str, str]:
    """The last answer's headers of a ``curl -D`` file (a 100 Continue comes before it)."""
    headers: dict[str, str] = {}
    for line in text.replace("\r", "").split("\n"):
        if line.startswith("HTTP/"):
            headers = {}
        elif ":" in line:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
    return headers


def main(argv: list[str], prog: str) -> int:
    """``prog judge ...`` (``argv`` begins with ``judge``), parsed as the whole command line parses
    it: the same usage lines and errors."""
    p = Parser(prog=prog, description="Conformance suite for AI-agent HTTP APIs")
    add_arguments(p.add_subparsers(dest="command", required=True).add_parser("judge", help=HELP))
    try:
        args = p.parse_args(argv)
    except SystemExit as exc:  # argparse exits 2 on usage errors; 0 for --help
        return int(exc.code or 0)
    return command(args)
