"""Requests sent at the same moment: what a server does with creates that overlap.

Every other check sends one request at a time, so a server whose creates race (an id read, then
advanced after an await: two creates at once get one id, the later overwriting the earlier) passes
them all. ``at_once`` sends a few requests together, each on a client (a connection) of its own,
released by one barrier; the check then judges, one request at a time, what they created. The count
is small (``AT_ONCE``) so a loopback target or a rate-limited one is not flooded, and the whole is
bounded by the client's timeouts like any other exchange.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import suppress
from functools import partial
from typing import Any, TypeVar

from .context import Context
from .http import Client, Response

T = TypeVar("T")

AT_ONCE = 6
"""Requests a check sends together: enough for an overlap to show, few enough for any server."""


def at_once(ctx: Context, sends: Sequence[Callable[[Client], T]]) -> list[T]:
    """Each of ``sends`` called at the same moment with a client of its own (its exchanges are the
    check's evidence like its other calls); their results in order. The first error any of them
    raised (a transport failure) is raised once all have ended."""
    clients = [ctx.new_client() for _ in sends]
    barrier = threading.Barrier(len(sends), timeout=max(1.0, ctx.options.timeout))

    def one(index: int) -> T:
        with suppress(threading.BrokenBarrierError):  # another thread never started: send anyway, later
            barrier.wait()
        return sends[index](clients[index])

    with ThreadPoolExecutor(max_workers=len(sends), thread_name_prefix="at-once") as pool:
        futures = [pool.submit(one, n) for n in range(len(sends))]
        errors = [f.exception() for f in futures]
    for client in clients:  # what a finding's reproduction cannot send as it was sent
        for exchange in client.log:
            exchange.at_once = True
    first = next((e for e in errors if e is not None), None)
    if first is not None:
        raise first
    return [f.result() for f in futures]


def posts(path: str, bodies: Sequence[Any]) -> list[Callable[[Client], Response]]:
    """One POST of each JSON body to ``path``: what ``at_once`` sends to create several of a kind."""
    return [partial(_post, path, body) for body in bodies]


def _post(path: str, body: Any, client: Client) -> Response:
    return client.post(path, json=body)


def expect_distinct(ctx: Context, ids: Sequence[str], what: str, field: str) -> None:
    """Fails unless the resources created at once got an id each: ``what`` and ``field`` name them."""
    shared = sorted({i for i in ids if ids.count(i) > 1})
    ctx.expect(
        not shared,
        f"{len(ids)} {what} created at the same moment got {len(set(ids))} {field}(s): {', '.join(shared[:3])} "
        f"answered to more than one",
    )
