"""The few HTTP calls the example clients make, on the standard library (a client starts fast)."""

from __future__ import annotations

import argparse
import gzip
import http.client
import json
import os
import sys
import time
import urllib.error
import urllib.parse
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


MAX_REDIRECTS = 5
TRANSPORT_BREAKS = ("ignore-redirect", "redirect-as-get", "gzip-undecoded")
"""Breaks of every call, whatever the task: ``ignore-redirect`` takes a 307/308 for the answer,
``redirect-as-get`` follows it with a GET and no body (what clients once did with a 302),
``gzip-undecoded`` accepts gzip and reads the bytes as they came."""
_transport: dict[str, str | None] = {"broken": None}


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """The client follows redirects itself (``call``), so that a break can decline to."""

    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


_OPENER = urllib.request.build_opener(_NoRedirect)


def _send(method: str, url: str, data: bytes | None, token: str | None, timeout: float) -> Answer:
    request = urllib.request.Request(url, data=data, method=method)
    request.add_header("Accept-Encoding", "gzip")  # and undone below, as Content-Encoding says
    if data is not None:
        request.add_header("Content-Type", "application/json")
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with _OPENER.open(request, timeout=timeout) as response:
            headers = {k.lower(): v for k, v in response.headers.items()}
            try:
                answer = Answer(response.status, headers, response.read())
            except http.client.IncompleteRead as exc:  # the connection closed mid-chunk: a cut stream
                answer = Answer(response.status, headers, exc.partial)
    except urllib.error.HTTPError as exc:
        answer = Answer(exc.code, {k.lower(): v for k, v in exc.headers.items()}, exc.read())
    if answer.headers.get("content-encoding") == "gzip" and _transport["broken"] != "gzip-undecoded":
        return Answer(answer.status, answer.headers, gzip.decompress(answer.body))
    return answer


def call(method: str, path: str, body: Any = None, token: str | None = None, timeout: float = 10.0) -> Answer:
    """One request; a 307/308 followed to its Location with the same method and body (RFC 9110 §15.4.8)."""
    data = None if body is None else json.dumps(body).encode()
    url = base_url() + path
    for _ in range(MAX_REDIRECTS + 1):
        answer = _send(method, url, data, token, timeout)
        if answer.status not in (307, 308) or "location" not in answer.headers:
            return answer
        if _transport["broken"] == "ignore-redirect":  # a client that checks only "below 400"
            return Answer(200, answer.headers, answer.body)
        url = urllib.parse.urljoin(url, answer.headers["location"])
        if _transport["broken"] == "redirect-as-get":
            method, data = "GET", None
    raise GaveUp(f"{method} {path}: more than {MAX_REDIRECTS} redirects")


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


def expect(answer: Answer, what: str, status: int = 200) -> Answer:
    """The answer when it has the status the task needs; else the client gives up, saying so."""
    if answer.status != status:
        raise GaveUp(f"{what}: {answer.status}")
    return answer


def fields(answer: Answer) -> dict[str, Any]:
    """The answer's JSON object; an empty body (a redirect taken for the answer) reads as none."""
    body = answer.json()
    return body if isinstance(body, dict) else {}


Task = Callable[[str | None], None]
"""A scenario's task, given the break the client was asked to make (None: the fair variant)."""


def entry(prog: str, tasks: Mapping[str, Task], breaks: tuple[str, ...], argv: list[str] | None = None) -> int:
    """The contract: 0 when the scenario's task succeeded, 1 when the client gave up."""
    p = argparse.ArgumentParser(prog=prog)
    p.add_argument("--break", dest="broken", choices=(*breaks, *TRANSPORT_BREAKS))
    p.add_argument("--hang", action="store_true", help="never finish (the scenario's bound must end it)")
    p.add_argument("--exit-at-once", action="store_true", help="exit 0 having done nothing")
    args = p.parse_args(argv)
    if args.exit_at_once:
        return 0
    if args.hang:
        time.sleep(3600)
    _transport["broken"] = args.broken if args.broken in TRANSPORT_BREAKS else None
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
