"""A finding's reproduction: the calls its failure depends on, from a fresh state, with the ids
each call needs taken from the answers before it.

``reproduction(calls, deciding)`` picks, among every call a check made, the deciding call and each
earlier one it depends on: a call whose answer gave a value a later chosen call sent (the create
whose ``task_id`` the read names) or showed (the write whose object a listing shows), or a write
that sent the same object's id (the steps run on the task before it was read). Each server-made
value a chosen call sends becomes a ``Capture``: where in which answer it is found (a JSON string
member, or a header), so a replay sends the id today's server gave, not the old one.
``check/script.py`` renders the reproduction as a ``sh`` script; ``conformance replay`` runs it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote, urlsplit

from .results import Capture, Exchange

MAX_STEPS = 40
"""Calls a reproduction keeps at most (the producers first, then the latest ones)."""
_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:~@+=-]{2,199}")
"""What a server-made value a client sends back looks like (ids, names, tokens)."""
_NOT_ID = re.compile(r"[0-9.:T+-]+Z?")
"""Numbers, dates and times: shared by unrelated answers, so never taken for a made object's id."""
_ID_HEADER = re.compile(r"(^|-)id$", re.IGNORECASE)
WRITES = frozenset({"POST", "PUT", "PATCH", "DELETE"})


def pattern(capture: Capture) -> re.Pattern[str]:
    """Where a body capture is found: a JSON string member by name (as the script's grep finds it)."""
    return re.compile(rf'"{re.escape(capture.key)}" *: *"([^"]*)"')


def find(capture: Capture, body: str, headers: Iterable[tuple[str, str]]) -> str | None:
    """The captured value in today's answer, where the recorded one was."""
    if capture.source == "header":
        found = [v for k, v in headers if k.lower() == capture.key.lower()]
        return found[-1].strip() if found else None
    hits = pattern(capture).findall(body)
    return hits[capture.nth - 1] if len(hits) >= capture.nth else None


@dataclass(slots=True)
class Reproduction:
    """The calls, oldest first (the last one decided the failure), and what each takes from before."""

    steps: list[Exchange]
    captures: list[Capture] = field(default_factory=list)
    baked: list[str] = field(default_factory=list)
    """Server-made values the calls send that no kept answer gave (a replay sends them as recorded:
    if the server no longer holds them, it cannot tell)."""
    state_dependent: bool = False
    """The requirement's verdict depends on what the server held (``Requirement.depends_on_state``):
    from a fresh state its answers differ whatever the server does."""


# ---- which calls ------------------------------------------------------------------------------


def _strings(value: Any, key: str = "") -> Iterator[tuple[str, str]]:
    """(member name, string) for every string in a JSON value; array items take their parent's name."""
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _strings(v, str(k))
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v, key)
    elif isinstance(value, str) and key:
        yield key, value


def _json_values(text: str | None) -> list[tuple[str, str]]:
    """String members of a JSON body, or of each JSON line or SSE ``data:`` event of a stream."""
    if not text:
        return []
    docs: list[Any] = []
    try:
        docs.append(json.loads(text))
    except ValueError:
        for line in text.splitlines():
            line = line.removeprefix("data:").strip()
            if line.startswith(("{", "[")):
                try:
                    docs.append(json.loads(line))
                except ValueError:
                    continue
    return [(k, v) for doc in docs for k, v in _strings(doc) if is_id(v)]


def is_id(value: str) -> bool:
    """An id, a name or a token: not a word of prose, not a number or a date."""
    return (
        _ID.fullmatch(value) is not None
        and _NOT_ID.fullmatch(value) is None
        and any(c.isdigit() or c in "_-.:" for c in value)
    )


def produced(ex: Exchange) -> list[tuple[str, str, str]]:
    """(source, key, value) of every id-like value the answer carries."""
    out = [("body", k, v) for k, v in _json_values(ex.response_body)]
    for name, value in ex.response_headers.items():
        if _ID_HEADER.search(name) and is_id(value.strip()):
            out.append(("header", name, value.strip()))
    return out


def sent_tokens(ex: Exchange) -> set[str]:
    """Values a request sends where a server-made one would go: path segments, query values, and
    the strings of a JSON body (a form or multipart body is searched as text)."""
    parts = urlsplit(ex.url)
    tokens = {unquote(s) for s in parts.path.split("/") if s}
    tokens |= {unquote(p.partition("=")[2]) for p in parts.query.split("&") if "=" in p}
    tokens = {t for t in tokens if is_id(t)}
    body = ex.request_body
    if body:
        values = _json_values(body)
        if values or body.lstrip().startswith(("{", "[")):
            tokens |= {v for _, v in values}
        else:
            tokens |= {t for t in _ID.findall(body) if is_id(t)}
    return tokens


def _shown(ex: Exchange) -> set[str]:
    return {v for _, _, v in produced(ex)}


def reproduction(exchanges: Sequence[Exchange], deciding: int) -> Reproduction:
    """The calls among ``exchanges`` that the call at ``deciding`` depends on, and the captures."""
    calls = list(exchanges[: deciding + 1])
    sent = [sent_tokens(ex) for ex in calls]
    # who first answered each value, if no earlier request had sent it (then it is the client's)
    maker: dict[str, int] = {}
    client_made: set[str] = set()
    for n, ex in enumerate(calls):
        client_made |= sent[n] - set(maker)
        for _, _, value in produced(ex):
            if value not in maker and value not in client_made:
                maker[value] = n
    server_sent = [{v for v in sent[n] if v in maker and maker[v] < n} for n in range(len(calls))]
    writes = {n for n, ex in enumerate(calls) if ex.method.upper() in WRITES and ex.status is not None}
    # objects the calls made (a write's answer gave their id), as against what a read found there
    # (an id carries a digit: a name or an enum word a write's answer repeats is not an object it made)
    objects = {v for v, m in maker.items() if m in writes and any(ch.isdigit() for ch in v)}
    chosen = {deciding}
    changed = True
    while changed:
        changed = False
        touched = set().union(*(server_sent[n] for n in chosen))
        shown = set().union(*(_shown(calls[n]) for n in chosen))
        for n in range(deciding):
            if n in chosen:
                continue
            makes = {v for v, m in maker.items() if m == n}
            gave = bool(makes & touched)  # its answer gave an id a chosen call sends
            same_object = calls[n].status is not None and bool(server_sent[n] & touched & objects)
            shows_its_work = n in writes and bool(makes & shown & objects)  # a chosen answer shows what it made
            if gave or same_object or shows_its_work:
                chosen.add(n)
                changed = True
    order = sorted(chosen)
    if len(order) > MAX_STEPS:
        order = order[: MAX_STEPS // 2] + order[-(MAX_STEPS - MAX_STEPS // 2) :]
    kept = {m: i for i, m in enumerate(order)}
    out = _captured([calls[n] for n in order], maker={v: kept[m] for v, m in maker.items() if m in kept})
    captured = {c.value for c in out.captures}
    out.baked = sorted({v for n in order for v in server_sent[n] if v not in captured})
    return out


def _captured(steps: list[Exchange], maker: dict[str, int]) -> Reproduction:
    out = Reproduction(steps)
    names: dict[str, str] = {}
    taken: set[str] = set()
    for n, ex in enumerate(steps):
        for value in sorted(sent_tokens(ex), key=len, reverse=True):
            if value in names:
                continue
            m = maker.get(value)
            if m is None or m >= n:
                continue
            where = next(((s, k) for s, k, v in produced(steps[m]) if v == value), None)
            if where is None:
                continue
            source, key = where
            nth = 1
            if source == "body":
                hits = pattern(Capture("", m, source, key, 1, value)).findall(steps[m].response_body or "")
                if value not in hits:
                    continue  # found only inside a stream's escaped text: not where grep can reach
                nth = hits.index(value) + 1
            name = _var(key, taken)
            names[value] = name
            out.captures.append(Capture(name, m, source, key, nth, value))
    return out


def _var(key: str, taken: set[str]) -> str:
    base = re.sub(r"[^A-Za-z0-9]+", "_", re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", key)).strip("_").upper() or "VALUE"
    if base[0].isdigit():
        base = "V_" + base
    name, n = base, 1
    while name in taken:
        n += 1
        name = f"{base}_{n}"
    taken.add(name)
    return name


def unknown_ids(steps: Sequence[Exchange], captures: Sequence[Capture]) -> set[str]:
    """Id-like values the calls send that no capture takes from an answer: where the calls did not
    start from a fresh state, whoever made them is unknown (an earlier session's objects)."""
    captured = {c.value for c in captures}
    return {v for ex in steps for v in sent_tokens(ex) if v not in captured and any(ch.isdigit() for ch in v)}


# ---- templates --------------------------------------------------------------------------------

Part = tuple[str, bool]
"""A piece of a request: literal text, or (``True``) the name of a captured variable."""


def template(text: str, captures: Sequence[Capture], before: int) -> list[Part]:
    """``text`` with each value captured before step ``before`` replaced by its variable."""
    usable = sorted((c for c in captures if c.step < before), key=lambda c: -len(c.value))
    if not usable:
        return [(text, False)]
    rx = re.compile("|".join(re.escape(c.value) for c in usable))
    by_value = {c.value: c.name for c in usable}
    parts: list[Part] = []
    last = 0
    for hit in rx.finditer(text):
        if hit.start() > last:
            parts.append((text[last : hit.start()], False))
        parts.append((by_value[hit.group()], True))
        last = hit.end()
    if last < len(text):
        parts.append((text[last:], False))
    return parts


def fill(parts: Sequence[Part], values: dict[str, str]) -> str:
    return "".join(values[p] if var else p for p, var in parts)
