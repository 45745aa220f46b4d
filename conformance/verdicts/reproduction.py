"""A finding's reproduction: the calls its failure depends on, from a fresh state, with the ids
each call needs taken from the answers before it.

``reproduction(calls, deciding)`` picks, among every call a check made, the deciding call and each
earlier one it depends on: a call whose answer gave a value a later chosen call sent (the create
whose ``task_id`` the read names) or showed (the create whose object a listing shows), or a write
that sent the id of an object a chosen call sends or shows (the steps run on the task before it was
read, the update of a session a listing shows). Each server-made value a chosen call sends becomes
a ``Capture``: where in which answer it is found (a JSON member, or a header), so a replay sends the
id today's server gave, not the old one. A compared answer's own made-anew values (a job token
``7000003``, an etag) are named the same way, unused: a fresh server counts from its own start,
so a replay compares them by where they stand and which answers share them, not by their value.

A value is an answer's *own* when it is not inside an array: the id a create answers with, as
against the ids a listing shows. A compared answer that shows objects no kept call made answered
from state the calls did not make (``outside_state``): from a fresh state it differs whatever the
server does. ``check/script.py`` renders the reproduction as a ``sh`` script; ``conformance
replay`` runs it.
"""

from __future__ import annotations

import json
import re
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from typing import Any
from urllib.parse import unquote, urlsplit

from .results import Capture, Exchange, Finding

MAX_STEPS = 40
"""Calls a reproduction keeps at most (the producers first, then the latest ones)."""
_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:~@+=-]{2,199}")
"""What a server-made value a client sends back looks like (ids, names, tokens)."""
_NOT_ID = re.compile(r"(?=.*[.:T+-])[0-9.:T+-]+Z?")
"""Decimals, dates and times: shared by unrelated answers, so never taken for a made object's id
(a run of digits alone is: a job token, a sequence number)."""
_MADE_ANEW = re.compile(
    r"(?:[A-Za-z][A-Za-z_-]{0,19})?[0-9]{3,}"  # a sequence number: 7000003, job-17
    r"|(?:[A-Za-z][A-Za-z_-]{0,19})?[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
    r"|(?:[A-Za-z][A-Za-z_-]{0,19})?[0-9a-f]{16,}"  # a uuid or a long hex id, bare or prefixed (chatcmpl-...)
)
"""A value a server makes anew for each object (a fresh server gives another): an answer's own
is named where it stands, so a replay sees which answers give the same one (an etag that did not
change with an update) without comparing the value itself."""
_ID_HEADER = re.compile(r"(^|-)id$", re.IGNORECASE)
_NUMBER_ID = range(100_000, 100_000_000)
"""JSON numbers that may be ids (a job token sent as a number): smaller ones are counts, larger
ones times (epoch seconds, blanked as what every run makes anew)."""
WRITES = frozenset({"POST", "PUT", "PATCH", "DELETE"})
STATUS = "status"
"""``Finding.judged`` of a check that judged the deciding answer's status alone."""


def writes(ex: Exchange) -> bool:
    """Whether a call may change what the server holds: a PUT, PATCH or DELETE, or a POST that
    sends something (a POST of nothing, ``{}``, asks: a listing, a history read)."""
    method = ex.method.upper()
    if method != "POST":
        return method in WRITES
    return (ex.request_body or "").strip() not in ("", "{}", "[]")


@dataclass(frozen=True, slots=True)
class Value:
    """An id-like value an answer carries."""

    source: str
    """``body`` (a JSON member) or ``header``."""
    key: str
    value: str
    own: bool
    """Not inside an array: the answer's own value, as against one of the items it lists."""


def pattern(capture: Capture) -> re.Pattern[str]:
    """Where a body capture is found: a JSON member by name, a string or an integer (as the
    script's grep finds it)."""
    return re.compile(rf'"{re.escape(capture.key)}" *: *(?:"([^"]*)"|(-?[0-9]+))')


def _hits(capture: Capture, body: str) -> list[str]:
    return [text or number for text, number in pattern(capture).findall(body)]


def find(capture: Capture, body: str, headers: Iterable[tuple[str, str]]) -> str | None:
    """The captured value in today's answer, where the recorded one was."""
    if capture.source == "header":
        found = [v for k, v in headers if k.lower() == capture.key.lower()]
        return found[-1].strip() if found else None
    hits = _hits(capture, body)
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
    wrong: list[int] = field(default_factory=list)
    """Earlier calls of another failure (the intruder's write that was let through): kept only
    where this failure needs them (an id, or a write to what it decides on), compared but never
    required, since a server that refuses them now is fixed there, not unable to go on."""
    probe: list[int] = field(default_factory=list)
    """Earlier calls of the failure's own probe (the chat start whose job's result broke the rule):
    compared, never required, since answering otherwise there is the failure not coming back."""
    unsure: str = ""
    """Why, whatever the server does, a replay's answers may differ from the recorded ones (empty:
    they may not): more calls than ``MAX_STEPS`` led to the failure and some were left out, or the
    deciding call reads an object whose answers changed by themselves in the recorded run (a job
    that finishes: a replay cannot be at the same moment of it)."""
    also: list[int] = field(default_factory=list)
    """Earlier reads the deciding answer was compared with (a task read by id, against its item in
    the list): kept and compared, never required, since either answer may be the wrong one."""
    judged: str = ""
    """``STATUS``: the check judged the deciding answer's status alone (a 200 where a 401 was due),
    so a replay compares the answers by their statuses only: a body read while a job still ran (a
    history one item shorter) is not the failure, and may differ by the moment it is sent."""
    accepted: list[int] = field(default_factory=list)
    """With ``judged``: the statuses the check would have accepted of the deciding answer; any
    other reproduces the failure (``Finding.accepted``)."""
    judgment: str = ""
    """The judgment that decided it (``Finding.judgment``): a replay judges today's deciding answer
    by it instead of comparing it with the recorded one."""
    facts: dict[str, Any] = field(default_factory=dict)
    """The judgment's facts as the run knew them (``Finding.facts``)."""

    @classmethod
    def of(cls, finding: Finding, state_dependent: bool = False) -> Reproduction:
        """A recorded finding's reproduction."""
        return cls(
            finding.evidence,
            finding.captures,
            finding.baked,
            state_dependent,
            finding.wrong,
            finding.probe,
            finding.unsure,
            finding.also,
            finding.judged,
            finding.accepted,
            finding.judgment,
            finding.facts,
        )


# ---- which calls ------------------------------------------------------------------------------


def _members(value: Any, key: str = "", own: bool = True) -> Iterator[tuple[str, str, bool]]:
    """(member name, value, own) for every string and large integer of a JSON value; array items
    take their parent's name and are not the answer's own."""
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _members(v, str(k), own)
    elif isinstance(value, list):
        for v in value:
            yield from _members(v, key, False)
    elif not key or isinstance(value, bool):
        return
    elif isinstance(value, str):
        yield key, value, own
    elif isinstance(value, int) and value in _NUMBER_ID:
        yield key, str(value), own


CACHED_CHARS = 8_192
"""The documents of a body up to this size are kept (an answer is kept up to about 4 KB): each
finding of a run carries the same bodies, and a finding's checks read each many times. Not of a
larger one (a request body is kept up to 1 MiB, and its documents take several times its text):
what is read of it is kept instead (``_Body``)."""


def _docs(text: str | None) -> tuple[Any, ...]:
    """A JSON body, or each JSON line or SSE ``data:`` event of a stream. Read, never changed."""
    text = text or ""
    return _kept_docs(text) if len(text) <= CACHED_CHARS else _read_docs(text)


def _read_docs(text: str) -> tuple[Any, ...]:
    if not text:
        return ()
    try:
        return (json.loads(text),)
    except ValueError:
        pass
    docs: list[Any] = []
    for line in text.splitlines():
        line = line.removeprefix("data:").strip()
        if line.startswith(("{", "[")):
            try:
                docs.append(json.loads(line))
            except ValueError:
                continue
    return tuple(docs)


_kept_docs = lru_cache(maxsize=1024)(_read_docs)


class _Body:
    """What is read of one body text, each part when first asked; kept per text (``_body``)."""

    def __init__(self, text: str) -> None:
        self.text = text

    @cached_property
    def said(self) -> frozenset[str]:
        """Every string of its JSON documents."""
        return frozenset(s for doc in _docs(self.text) for s in _strings(doc))

    @cached_property
    def tokens(self) -> frozenset[str]:
        """Its id-like values (a form or multipart body's, searched as text)."""
        values = _json_values(self.text)
        if values or self.text.lstrip().startswith(("{", "[")):
            return frozenset(v for _, v, _ in values)
        return frozenset(t for t in _ID.findall(self.text) if is_id(t))

    @cached_property
    def content(self) -> bool:
        """Whether it sends something of its own, not only ids (``_sends_content``)."""
        docs = _docs(self.text)
        if not docs:
            return True  # a form or a file
        return any(not is_id(s) for doc in docs for s in _strings(doc))


@lru_cache(maxsize=256)
def _read(text: str) -> _Body:
    return _Body(text)


def _body(text: str | None) -> _Body:
    return _read(text or "")


CUT = re.compile(r"\.\.\. \[\d+ more characters\]$")
"""How a report marks a body it kept only the start of (``check/http.py``)."""
_MEMBER = re.compile(r'"((?:[^"\\]|\\.){1,200})" *: *(?:"((?:[^"\\]|\\.){0,200})"|(-?[0-9]+))')


def _json_values(text: str | None) -> list[tuple[str, str, bool]]:
    """Id-like members of a JSON body, or of each JSON line or SSE ``data:`` event of a stream; of
    a body the report kept only the start of, the members it holds (where they stand unknown)."""
    docs = _docs(text)
    if docs or not text or not CUT.search(text):
        return [(k, v, own) for doc in docs for k, v, own in _members(doc) if is_id(v)]
    found = []
    for key, string, number in _MEMBER.findall(text):
        try:
            value = number or json.loads(f'"{string}"')
        except ValueError:
            continue
        if is_id(value) and (not number or int(number) in _NUMBER_ID):
            found.append((json.loads(f'"{key}"'), value, True))
    return found


def _strings(value: Any) -> Iterator[str]:
    """Every string of a JSON value."""
    if isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)
    elif isinstance(value, str):
        yield value


def _items(value: Any) -> Iterator[Any]:
    """Every element of every array of a JSON value (the things a listing shows)."""
    if isinstance(value, dict):
        for v in value.values():
            yield from _items(v)
    elif isinstance(value, list):
        for v in value:
            yield v
            yield from _items(v)


def _sends_content(ex: Exchange) -> bool:
    """Whether a call sends something of its own (a question, an input, a file), not only ids
    (a read, or a listing asked for with POST and ``{}``)."""
    return ex.method.upper() in WRITES and bool(ex.request_body) and _body(ex.request_body).content


_COUNT = re.compile(r"total|count", re.IGNORECASE)


def _counts(value: Any) -> Iterator[int]:
    """The integers a JSON value gives as counts (``total_items``, ``count``): what a listing says
    the server holds."""
    if isinstance(value, dict):
        for k, v in value.items():
            if isinstance(v, int) and not isinstance(v, bool) and _COUNT.search(str(k)):
                yield v
            else:
                yield from _counts(v)
    elif isinstance(value, list):
        for v in value:
            yield from _counts(v)


def _distinctive(text: str) -> bool:
    """Text one object carries and another would not (a question asked, a time, an id), as against
    a word many share (an enum value, a node's name)."""
    return len(text) >= 4 and any(ch.isdigit() or ch.isspace() for ch in text)


def is_id(value: str) -> bool:
    """An id, a name or a token: not a word of prose, not a decimal or a date."""
    return (
        _ID.fullmatch(value) is not None
        and _NOT_ID.fullmatch(value) is None
        and any(c.isdigit() or c in "_-.:" for c in value)
    )


_SEEN: OrderedDict[tuple[Any, ...], tuple[Exchange, Any]] = OrderedDict()
"""What ``produced`` and ``sent_tokens`` found in the latest exchanges: every finding of a run draws
its reproduction from the same calls (the run's journal), each parsed once."""


def _memo(kind: str, ex: Exchange, find: Callable[[Exchange], Any]) -> Any:
    # the exchange itself is kept with the answer, so its id is never another's while cached
    key = (kind, id(ex), ex.url, ex.status, len(ex.request_body or ""), len(ex.response_body or ""))
    hit = _SEEN.get(key)
    if hit is not None and hit[0] is ex:
        _SEEN.move_to_end(key)
        return hit[1]
    value = find(ex)
    _SEEN[key] = (ex, value)
    if len(_SEEN) > 20_000:
        _SEEN.popitem(last=False)
    return value


def produced(ex: Exchange) -> list[Value]:
    """Every id-like value the answer carries."""
    found: list[Value] = _memo("produced", ex, _produced)
    return found


def _produced(ex: Exchange) -> list[Value]:
    out = [Value("body", k, v, own) for k, v, own in _json_values(ex.response_body)]
    for name, value in ex.response_headers.items():
        if _ID_HEADER.search(name) and is_id(value.strip()):
            out.append(Value("header", name, value.strip(), True))
    return out


def sent_tokens(ex: Exchange) -> set[str]:
    """Values a request sends where a server-made one would go: path segments, query values, and
    the strings of a JSON body (a form or multipart body is searched as text)."""
    found: set[str] = _memo("sent", ex, _sent_tokens)
    return found


def _sent_tokens(ex: Exchange) -> set[str]:
    parts = urlsplit(ex.url)
    tokens = {unquote(s) for s in parts.path.split("/") if s}
    tokens |= {unquote(p.partition("=")[2]) for p in parts.query.split("&") if "=" in p}
    tokens = {t for t in tokens if is_id(t)}
    return tokens | _body(ex.request_body).tokens


def _object_id(value: str) -> bool:
    """An id carries a digit: a name or an enum word a write's answer repeats is not an object."""
    return any(ch.isdigit() for ch in value)


def reproduction(
    exchanges: Sequence[Exchange],
    deciding: int,
    *,
    wrong: Iterable[Exchange] = (),
    probe: Iterable[Exchange] = (),
    also: Iterable[Exchange] = (),
    message: str = "",
) -> Reproduction:
    """The calls among ``exchanges`` that the call at ``deciding`` depends on, and the captures.
    ``wrong``, ``probe`` and ``also``: calls of another failure, of this one's probe, and the
    answers the deciding one was compared with (``Reproduction``), which are always kept.
    ``message``: the failure's; an object it names (the session a listing left out) is one the
    deciding call depends on, as if it sent its id."""
    calls = list(exchanges[: deciding + 1])
    sent = [sent_tokens(ex) for ex in calls]
    # who first answered each value (``maker``), and whose answer first had it as its own
    # (``owner``), if no earlier request had sent it (then it is the client's)
    maker: dict[str, int] = {}
    owner: dict[str, int] = {}
    client_made: set[str] = set()
    answers = [produced(ex) for ex in calls]
    for n in range(len(calls)):
        client_made |= sent[n] - maker.keys()
        for v in answers[n]:
            if v.value in client_made:
                continue
            maker.setdefault(v.value, n)
            if v.own:
                owner.setdefault(v.value, n)
    server_sent = [{v for v in sent[n] if v in maker and maker[v] < n} for n in range(len(calls))]
    writing = {n for n, ex in enumerate(calls) if writes(ex) and ex.status is not None}
    # objects the calls made (a write answered with their id as its own), as against what a read
    # or a listing found there
    objects = {v for v, m in owner.items() if m in writing and _object_id(v)}
    # the resources a path names that some answer gave (an agent a listing found), not the
    # document's own words (streaming_chat)
    addressed = [_path_values(ex) & maker.keys() for ex in calls]
    paths = [urlsplit(ex.url).path for ex in calls]
    named = {t for t in _ID.findall(message) if t in objects}
    compared_with = {id(ex) for ex in also}
    chosen = {deciding} | {n for n in range(deciding) if id(calls[n]) in compared_with}
    others = {n for n, ex in enumerate(calls) if id(ex) in {id(w) for w in wrong}} - {id(p) for p in probe}
    # what the deciding call itself is about: another failure's write to it still changed it
    needed = (server_sent[deciding] | named) & objects

    # the same request just before it: a read may change what the next one answers (a job's result
    # consumed by its first read, a state that reverts once seen)
    def request(ex: Exchange) -> tuple[str, str, str | None]:
        return ex.method, ex.url, ex.request_body

    again = [n for n in range(deciding) if request(calls[n]) == request(calls[deciding])]
    chosen |= set(again[-1:])
    changed = True
    while changed:
        changed = False
        touched = named.union(*(server_sent[n] for n in chosen))
        shown = set().union(*({v.value for v in answers[n]} for n in chosen)) & objects
        # what a chosen read addresses: a write there may change what it shows (a chat with the agent
        # whose connectivity is read); a chat or a create answers for itself
        at = set().union(*(addressed[n] for n in chosen if not _sends_content(calls[n])))
        # what a chosen read lists: a delete of one of its items leaves no trace in it but its count
        listed = tuple(paths[n].rstrip("/") + "/" for n in chosen if not _sends_content(calls[n]))
        givers = {maker[v] for v in touched}  # the answers that gave an id a chosen call sends
        givers |= {_latest(answers, v, n) for n in chosen for v in server_sent[n] - objects - _path_values(calls[n])}
        makers = {owner[v] for v in shown}  # the writes that made what a chosen answer shows
        touched_objects = touched & objects
        for n in range(deciding):
            if n in chosen:
                continue
            # a write to an object a chosen call sends (a read of it in between only waited: the
            # pause before the next call stands for it), to one a chosen answer shows, or to a
            # resource a chosen call names (the chat with the agent whose connectivity is read)
            wrote = n in writing and bool(
                server_sent[n] & touched_objects
                or server_sent[n] & shown
                or addressed[n] & at
                or (calls[n].method.upper() == "DELETE" and paths[n].startswith(listed))
            )
            if n in others and n not in givers and not server_sent[n] & needed:
                continue  # another failure's call, needed neither for an id nor for what decides this one
            if n in givers or (n in writing and n in makers) or wrote:
                chosen.add(n)
                changed = True
    order = sorted(chosen)
    unsure = _drifts(calls, deciding, sent, writing)
    if len(order) > MAX_STEPS:
        unsure = f"{len(order)} calls led to it: the first and last {MAX_STEPS // 2} are kept"
        order = order[: MAX_STEPS // 2] + order[-(MAX_STEPS - MAX_STEPS // 2) :]
    kept = {m: i for i, m in enumerate(order)}
    own = {id(ex) for ex in probe}
    out = Reproduction(
        [calls[n] for n in order],
        wrong=[i for i, n in enumerate(order[:-1]) if n in others],
        probe=[i for i, n in enumerate(order[:-1]) if id(calls[n]) in own],
        unsure=unsure,
        also=[i for i, n in enumerate(order[:-1]) if id(calls[n]) in compared_with],
    )
    out.captures = _captured(out, maker={v: kept[m] for v, m in maker.items() if m in kept})
    captured = {c.value for c in out.captures}
    out.baked = sorted({v for n in order for v in server_sent[n] | _cut_off(calls, n, sent) if v not in captured})
    return out


def _latest(answers: list[list[Value]], value: str, before: int) -> int:
    """The latest answer before call ``before`` that gave ``value``: where a value a read gives
    anew was taken from (a page token the same on every walk of a list: the walk the call went on,
    whose first page showed the newest objects, not the first walk's)."""
    return next(m for m in range(before - 1, -1, -1) if any(v.value == value for v in answers[m]))


def _cut_off(calls: list[Exchange], n: int, sent: list[set[str]]) -> set[str]:
    """Ids call ``n`` sends first to a path whose earlier answer the report kept only in part (a
    page's nextPageToken past the first 4000 characters of a long page): they may have come from
    the part cut off, so their origin is unknown, as an earlier session's ids are."""
    path = urlsplit(calls[n].url).path
    cut = [m for m in range(n) if urlsplit(calls[m].url).path == path and CUT.search(calls[m].response_body or "")]
    if not cut:
        return set()
    before = set().union(*sent[:n]) if n else set()
    return {v for v in sent[n] - before - _path_values(calls[n]) if _object_id(v)}


_SHAPE = re.compile(r"[0-9a-fA-F]{8,}|[0-9]+")


def _drifts(calls: list[Exchange], deciding: int, sent: list[set[str]], writing: set[int]) -> str:
    """Why the deciding call's answer may differ by the moment it is sent: a read of an object it
    names was sent twice in the run and answered otherwise (not only other ids, times or counts),
    and nothing wrote anything in between (a job that finished, an agent that researched on).
    Reads of other resources under the same object (two artifacts of one task) differ by nature."""
    last_seen: dict[tuple[str, str, str | None], str] = {}
    for n in range(deciding):
        ex = calls[n]
        if n in writing:
            last_seen.clear()  # what a read answers next may be the write's doing
            continue
        if not sent[n] & sent[deciding]:
            continue
        request = (ex.method.upper(), ex.url, ex.request_body)
        shape = f"{ex.status} " + _SHAPE.sub("#", ex.response_body or "")
        if request in last_seen and last_seen[request] != shape:
            path = urlsplit(ex.url).path
            return f"{ex.method.upper()} {path} answered otherwise by itself between two reads of the recorded run"
        last_seen[request] = shape
    return ""


def _path_values(ex: Exchange) -> set[str]:
    """The id-like segments of a request's path: the resource it addresses."""
    return {v for v in (unquote(s) for s in urlsplit(ex.url).path.split("/") if s) if is_id(v)}


def _captured(rep: Reproduction, maker: dict[str, int]) -> list[Capture]:
    """The values the calls send that an earlier kept answer gave, then the sequence numbers the
    compared answers give of their own (named, unused)."""
    steps = rep.steps
    out: list[Capture] = []
    names: dict[str, str] = {}
    taken: set[str] = set(RESERVED)
    for n, ex in enumerate(steps):
        for value in sorted(sent_tokens(ex), key=len, reverse=True):
            if value in names:
                continue
            m = maker.get(value)
            if m is None or m >= n:
                continue
            capture = _capture(steps[m], m, value, taken, used=True)
            if capture is not None:
                names[value] = capture.name
                out.append(capture)
    rep.captures = out
    judged = set(compared(rep))
    sent: set[str] = set()
    for n, ex in enumerate(steps):
        sent |= sent_tokens(ex)
        if n not in judged:
            continue
        for v in produced(ex):
            if v.own and v.value not in names and v.value not in sent and _MADE_ANEW.fullmatch(v.value):
                capture = _capture(ex, n, v.value, taken, used=False)
                if capture is not None:
                    names[v.value] = capture.name
                    out.append(capture)
    return out


def _capture(answer: Exchange, step: int, value: str, taken: set[str], *, used: bool) -> Capture | None:
    """Where in ``answer`` (call ``step``) ``value`` is first found, as a capture; None when grep
    cannot reach it (only inside a stream's escaped text)."""
    where = next(((v.source, v.key) for v in produced(answer) if v.value == value), None)
    if where is None:
        return None
    source, key = where
    nth = 1
    if source == "body":
        hits = _hits(Capture("", step, source, key, 1, value), answer.response_body or "")
        if value not in hits:
            return None
        nth = hits.index(value) + 1
    return Capture(_var(key, taken), step, source, key, nth, value, used)


CREDENTIALS = ("TOKEN", "SECOND_TOKEN")
"""The variables a report names the run's tokens by (``--token``, ``--second-token``): a curl line
or a script expands them from the environment (``check/credentials.py``)."""
RESERVED = frozenset({*CREDENTIALS, "BASE", "D", "MAX_TIME", "NAMED", "DIFFER"})
"""Names a script already gives a meaning (the credentials, its own variables)."""


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
    captured = {c.value for c in captures if c.used}
    return {v for ex in steps for v in sent_tokens(ex) if v not in captured and _object_id(v)}


# ---- what a replay requires and compares ------------------------------------------------------


def judged_setup(rep: Reproduction, index: int) -> bool:
    """Whether a replay compares the answer of the call at ``index`` with the recorded one: a
    write (a failure can lie in an upload's answer that a later listing contradicts), or a call
    whose answer gives a later one its id. A read that only looked (a poll) is sent for its timing
    and never judged: its recorded answer may be the very fault."""
    ex = rep.steps[index]
    return writes(ex) or index in rep.also or any(c.step == index and c.used for c in rep.captures)


def required(rep: Reproduction, index: int) -> bool:
    """Whether a replay that gets another kind of answer here (a 4xx for a recorded 2xx) cannot
    tell (inconclusive): a judged setup call, not a failure's own call (this one's probe, or
    another failure's: the intruder's write now refused is a difference, not a missing setup)."""
    last = len(rep.steps) - 1
    mine = index in rep.probe or index in rep.wrong or index in rep.also
    return index < last and not mine and judged_setup(rep, index)


def pauses(rep: Reproduction) -> list[float]:
    """Seconds to wait before each call, as the recorded run left the server between them (a job
    finishing while the check polled it), each at most ``PAUSE`` and all at most ``PAUSES``, the
    latest first: the wait just before the deciding call is the one its answer shows."""
    gaps: list[float] = []
    for n, ex in enumerate(rep.steps):
        before = rep.steps[n - 1] if n else None
        gap = 0.0
        if before is not None and before.started is not None and ex.started is not None:
            gap = ex.started - (before.started + before.elapsed_ms / 1000)
        gaps.append(min(max(gap, 0.0), PAUSE))
    out = [0.0] * len(gaps)
    left = PAUSES
    for n in range(len(gaps) - 1, -1, -1):
        gap = round(min(gaps[n], left), 2)
        out[n] = gap if gap >= 0.02 else 0.0
        left -= out[n]
    return out


PAUSE, PAUSES = 1.0, 3.0
"""At most this long a wait between two calls, and in all (an earlier sequence of the model-based
phase ran between two calls of its reproduction: that wait is not part of it)."""


def compared(rep: Reproduction) -> list[int]:
    """The calls whose answers a replay compares with the recorded ones: the judged setup calls
    (an earlier answer may be the wrong one, as an upload's that a later listing contradicts) and
    the deciding call."""
    last = len(rep.steps) - 1
    return [n for n in range(last) if judged_setup(rep, n)] + [last]


AT_ONCE = "the check sent requests at the same moment (a race): a script or a replay sends them one after another"
"""A finding's ``unsure`` when the calls behind it were under way together."""


def overlapping(calls: list[Exchange]) -> bool:
    """Whether any of ``calls`` was sent with others at the same moment (``Exchange.at_once``)."""
    return any(ex.at_once for ex in calls)


def sent_at_once(rep: Reproduction) -> bool:
    """Whether the failure came of requests sent at the same moment (a check of a race): a script or
    a replay sends them one after another, so whatever the answers, it cannot tell whether the race
    is still there."""
    return rep.unsure == AT_ONCE or overlapping(rep.steps)


def outside_state(rep: Reproduction) -> bool:
    """Whether the recorded answers depend on state these calls did not make: the requirement says
    so, or a compared answer showed objects they did not make (a listing of what the whole run, or
    the server before it, held). From a fresh state those answers differ whatever the server does,
    so a difference cannot tell. Only the former when the check judged the status alone: the
    answers are compared by their statuses, not by the objects they show."""
    if rep.state_dependent or rep.unsure:
        return True
    if rep.judged == STATUS:
        return False
    made = {v.value for ex in rep.steps for v in produced(ex) if v.own}
    made |= {v for ex in rep.steps for v in sent_tokens(ex)}
    # what the calls said, and what their writes were answered: a listed item showing none of it
    # (a question another session asked) is something else's
    said = {s for ex in rep.steps for s in _body(ex.request_body).said}
    raw = "".join(ex.request_body or "" for ex in rep.steps)  # a form or multipart body, as text
    # the objects the writes made: a listing that counts more (total_items 57 for the 3 made) counted
    # what the rest of the run made, even when the page it shows is empty
    created = {v.value for ex in rep.steps if writes(ex) for v in produced(ex) if v.own and _object_id(v.value)}
    seen = 0
    for n in compared(rep):  # in order: each step's writes are taken in once
        # what an earlier write answered with is its doing too (the artifacts a step made)
        for ex in rep.steps[seen:n]:
            if writes(ex):
                made |= {v.value for v in produced(ex)}
                said |= _body(ex.response_body).said
        seen = n
        answer = rep.steps[n]
        if any(not v.own and v.value not in made and _object_id(v.value) for v in produced(answer)):
            return True
        if _sends_content(answer):  # what a chat or a create answers with is its own doing
            continue
        if any(count > len(created) for doc in _docs(answer.response_body) for count in _counts(doc)):
            return True
        if CUT.search(answer.response_body or ""):  # a read kept only in part: what else it showed is unknown
            return True
        if n < len(rep.steps) - 1:
            continue  # a setup read's items may be the server's own catalogue (the agents it offers)
        for doc in _docs(answer.response_body):
            for item in _items(doc):
                texts = [s for s in _strings(item) if _distinctive(s)]
                if texts and not any(s in said or s in made or s in raw for s in texts):
                    return True
    return False


def stale_facts(rep: Reproduction) -> list[str]:
    """Values a judgment's facts name that the recorded run's server made (an id its answers gave)
    and that no call takes from today's answers (a used capture): a replay cannot name today's in
    their place, so it does not judge again by them (it compares)."""
    captured = {c.value for c in rep.captures if c.used}
    stale: set[str] = set()
    for value in set(_strings(rep.facts)) - captured:
        for ex in rep.steps:  # whoever said it first made it: a value a request sent first is the client's
            said = _body(ex.request_body).said | sent_tokens(ex)
            if value in said:
                break
            if _object_id(value) and any(v.value == value for v in produced(ex)):
                stale.add(value)
                break
    return sorted(stale)


# ---- templates --------------------------------------------------------------------------------

Part = tuple[str, bool]
"""A piece of a request: literal text, or (``True``) the name of a captured variable."""


def template(text: str, captures: Sequence[Capture], before: int) -> list[Part]:
    """``text`` with each value captured before step ``before`` replaced by its variable."""
    usable = sorted((c for c in captures if c.step < before and c.used), key=lambda c: -len(c.value))
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
