"""The few HTTP calls the example clients make, on the standard library (a client starts fast)."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

MAX_RETRIES = 3
"""A fair client's retries of a 429/503 (the requirements allow five in a row)."""
FLOOD_REQUESTS = 100_000
"""A flooding client's bound: the scenario's timeout ends it long before."""


@dataclass(frozen=True, slots=True)
class Answer:
    status: int
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body) if self.body else None


class GaveUp(Exception):
    """The task cannot succeed: the client exits non-zero, saying why."""


def base_url() -> str:
    return os.environ["CONFORMANCE_BASE_URL"].rstrip("/")


def call(method: str, path: str, body: Any = None, token: str | None = None, timeout: float = 10.0) -> Answer:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(base_url() + path, data=data, method=method)
    if data is not None:
        request.add_header("Content-Type", "application/json")
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return Answer(response.status, {k.lower(): v for k, v in response.headers.items()}, response.read())
    except urllib.error.HTTPError as exc:
        return Answer(exc.code, {k.lower(): v for k, v in exc.headers.items()}, exc.read())


def patient(method: str, path: str, body: Any = None, token: str | None = None, *, broken: str | None = None) -> Answer:
    """One call, retried on 429/503 after the Retry-After delay, at most MAX_RETRIES times. The
    breaks: ``ignore-retry-after`` retries at once, ``flood`` at once and without end."""
    retries = FLOOD_REQUESTS if broken == "flood" else MAX_RETRIES
    for _ in range(retries + 1):
        answer = call(method, path, body, token)
        if answer.status not in (429, 503):
            return answer
        if broken not in ("ignore-retry-after", "flood"):
            time.sleep(min(float(answer.headers.get("retry-after", "1") or 1), 30.0))
    raise GaveUp(f"{method} {path}: still {answer.status} after {retries} retries")


Task = Callable[[str | None], None]
"""A scenario's task, given the break the client was asked to make (None: the fair variant)."""


def entry(prog: str, tasks: Mapping[str, Task], breaks: tuple[str, ...], argv: list[str] | None = None) -> int:
    """The contract: 0 when the scenario's task succeeded, 1 when the client gave up."""
    p = argparse.ArgumentParser(prog=prog)
    p.add_argument("--break", dest="broken", choices=breaks)
    p.add_argument("--hang", action="store_true", help="never finish (the scenario's bound must end it)")
    p.add_argument("--exit-at-once", action="store_true", help="exit 0 having done nothing")
    args = p.parse_args(argv)
    if args.exit_at_once:
        return 0
    if args.hang:
        time.sleep(3600)
    scenario = os.environ["CONFORMANCE_SCENARIO"]
    if scenario not in tasks:
        print(f"{prog}: no task for scenario {scenario}", file=sys.stderr)
        return 1
    try:
        tasks[scenario](args.broken)
    except GaveUp as exc:
        print(f"gave up: {exc}", file=sys.stderr)
        return 1
    return 0
