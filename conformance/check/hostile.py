"""Hostile inputs, one mechanism for every protocol: JSON bodies that are not objects, sent to
every operation whose document takes a JSON object; hostile text (lone surrogates, and a seeded
draw from a maintained corpus) in the free text a protocol's run sends, multipart file names and
text fields included (``multipart``). Each protocol names its
operations and what they could change; the rules, what is sent and how it is judged, are here.

Sent as bytes, never through an encoder: a lone surrogate (``"\\ud800"``) is valid JSON only as an
escape and no UTF-8 encoder writes it, so the body is ``json.dumps`` with ASCII escapes; in a
multipart file name, where JSON's escapes do not reach, it is the bytes a lenient encoder writes.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from specs.documents import Spec

from . import internals
from .context import Context
from .http import Response, TargetError
from .shown import shown

NON_OBJECT_BODIES: tuple[tuple[str, bytes], ...] = (
    ("null", b"null"),
    ("an empty array", b"[]"),
    ("a string", b'"x"'),
    ("a number", b"1"),
)
"""JSON texts that are valid JSON and no object: a server that reads a body as ``body or {}``
takes the first two for an empty request and acts on them."""

LONE_SURROGATES: tuple[tuple[str, str], ...] = (
    ("a lone high surrogate", "\ud800"),
    ("a lone low surrogate inside text", "before \udfff after"),
    ("a surrogate pair reversed", "\udc00\ud800"),
)
"""Strings JSON can carry (as escapes) and no UTF-8 text can: a server must refuse them or store
something it can write back (U+FFFD in their place); one that stores them as they came may fail
every later answer that holds them."""


def lone_surrogate(text: str) -> bool:
    """Whether ``text`` holds a lone surrogate (``LONE_SURROGATES``' kind: what no UTF-8 text holds)."""
    return any(0xD800 <= ord(c) <= 0xDFFF for c in text)


CORPUS_DRAWS = 6
"""Strings drawn each run from the maintained corpus, beside the lone surrogates."""

_FALLBACK = ("undefined", "__proto__", "NaN", "\u202etxt.exe", "a\u2028b\u2029c\x85d")
"""Used only when Hypothesis no longer holds its corpus where ``corpus()`` looks."""


def corpus() -> tuple[str, ...]:
    """Hypothesis' own list of hostile strings (the Big List of Naughty Strings' kinds: code-like
    words, numbers as text, RTL, zalgo, emoji modifiers, reserved device names, line separators),
    which it mixes into every generated text. Maintained with Hypothesis, already a dependency, so
    no list of ours to keep; private, hence the fallback."""
    try:
        GLOBAL_CONSTANTS = internals.get("hypothesis.global_constants")
    except internals.InternalMoved:  # pragma: no cover - a Hypothesis that moved it (the test says so)
        return _FALLBACK
    strings = tuple(s for s in GLOBAL_CONSTANTS.strings if isinstance(s, str))
    return strings or _FALLBACK


def texts(seed: int, draws: int = CORPUS_DRAWS) -> tuple[tuple[str, str], ...]:
    """(name, text) of the hostile texts a run sends: every lone surrogate, then ``draws`` strings
    of the corpus drawn with ``seed`` (the same seed sends the same strings)."""
    pool = sorted(corpus())
    drawn = random.Random(f"{seed}/hostile-text").sample(pool, min(draws, len(pool)))
    return (*LONE_SURROGATES, *((f"corpus string {shown(text, 40)}", text) for text in drawn))


def json_bytes(value: Any) -> bytes:
    """``value`` as JSON with every non-ASCII character escaped: lone surrogates included."""
    return json.dumps(value, ensure_ascii=True).encode("ascii")


def form_text(value: str, *, header: bool = False) -> bytes:
    """Text as a form encoder writes it into multipart: UTF-8, a lone surrogate as the three bytes a
    lenient encoder writes for it (``surrogatepass``: not UTF-8, so a server must refuse the name or
    decode it with a replacement); in a header parameter (``header``), '"', CR and LF as HTML5's
    form encoding escapes them, so the text cannot end the header."""
    if header:
        value = value.replace('"', "%22").replace("\r", "%0D").replace("\n", "%0A")
    return value.encode("utf-8", "surrogatepass")


MULTIPART_BOUNDARY = "conformance-hostile-7d3f0c9a51e2"


def multipart(parts: Sequence[tuple[str, str | None, bytes]]) -> tuple[bytes, str]:
    """A multipart/form-data body of ``parts`` (field name, file name or None for a text field,
    content), built by hand: an encoder refuses a file name it cannot write as UTF-8, which is the
    point here. Returns the body and its Content-Type."""
    out = bytearray()
    for name, file_name, content in parts:
        out += f"--{MULTIPART_BOUNDARY}\r\n".encode()
        out += b'Content-Disposition: form-data; name="' + form_text(name, header=True) + b'"'
        if file_name is not None:
            out += b'; filename="' + form_text(file_name, header=True) + b'"\r\nContent-Type: application/octet-stream'
        out += b"\r\n\r\n" + content + b"\r\n"
    out += f"--{MULTIPART_BOUNDARY}--\r\n".encode()
    return bytes(out), f"multipart/form-data; boundary={MULTIPART_BOUNDARY}"


def send_json(
    ctx: Context, method: str, path: str, body: bytes, auth: str | None = None, *, streamed: bool = False
) -> Response:
    """``body`` sent as JSON; ``streamed``: an operation that answers a stream, whose 2xx body is
    not read (its events are other requirements' subject, its status this one's: a stream that
    stalls or idles after its end holds nothing here)."""
    headers = {"Content-Type": "application/json"}
    if not streamed:
        return ctx.client.request(method, path, content=body, headers=headers, auth=auth)
    with ctx.client.stream(method, path, content=body, headers=headers, auth=auth) as answer:
        data = b"" if 200 <= answer.status < 300 else answer.read()
        return Response(answer.status, answer.headers, data, answer.exchange)


def json_body_operations(spec: Spec) -> frozenset[str]:
    """The operations whose document takes a JSON request body."""
    found = set()
    for op in spec.operations():
        body = op.definition.get("requestBody")
        if body is not None and any("json" in media for media in spec.resolve(body).get("content") or {}):
            found.add(op.operation_id)
    return frozenset(found)


@dataclass(frozen=True, slots=True)
class Write:
    """One operation that takes a JSON body, at a path where it acts (its resources exist)."""

    operation_id: str
    method: str
    path: str
    changes: str = ""
    """What it would create, run or change, as a message names it ("the task's steps")."""
    state: Callable[[], object] | None = None
    """Reads ``changes`` back (the same value before and after, or something was made); None for
    an operation that changes nothing a client can read."""
    statuses: tuple[int, ...] = ()
    """The refusal's statuses, where the document names them; else any 4xx."""
    auth: str | None = None
    streamed: bool = False
    """It answers a stream (``send_json``)."""


def refuses_non_objects(ctx: Context, writes: Sequence[Write]) -> None:
    """Every non-object body to every write: a 4xx (one of its ``statuses`` where it names them),
    its body as the document gives it for that status when it lists the status, and what the write
    could change read back unchanged."""
    missing = json_body_operations(ctx.spec) - {w.operation_id for w in writes}
    if missing:  # the suite's own bug: a protocol that does not name every operation taking JSON
        raise AssertionError(f"no hostile-body target for {sorted(missing)}")
    for write in writes:
        before = write.state() if write.state is not None else None
        for name, raw in NON_OBJECT_BODIES:
            with ctx.part(f"{write.operation_id} with {name} as its JSON body"):
                response = send_json(ctx, write.method, write.path, raw, write.auth, streamed=write.streamed)
                if write.statuses:
                    ctx.expect_status(response, *write.statuses)
                ctx.expect(
                    400 <= response.status < 500,
                    f"answered {response.status}, not a 4xx refusal: {response.shown(200)}",
                    response,
                )
                if ctx.response_spec(write.operation_id, response.status) is not None:  # else SCHEMA-002's
                    ctx.conforms(response, write.operation_id, response.status)
        if write.state is not None:
            with ctx.part(f"{write.changes} after the refused bodies to {write.operation_id}"):
                after = write.state()
                ctx.expect(
                    after == before,
                    f"changed: {shown(before, 120)} before the non-object bodies, {shown(after, 120)} after",
                )


@dataclass(frozen=True, slots=True)
class Read:
    """A list or read the server answered before the hostile text, read again after it."""

    label: str
    read: Callable[[], Response]


def survives_hostile_text(
    ctx: Context, reads: Sequence[Read], fields: Sequence[tuple[str, Callable[[str], Response]]]
) -> None:
    """Each hostile text in each free-text field (``fields``: name, a send of one text): accepted
    or refused with a 4xx, never a 5xx; then every read that answered 2xx before still does (a
    server that stored a text it cannot write back fails every answer that holds it)."""
    answered = []
    for read in reads:
        try:
            response = read.read()
        except TargetError:  # a read that stalls before the hostile text is no victim of it
            continue
        if 200 <= response.status < 300:
            answered.append(read)
    for field, send in fields:
        for name, text in texts(ctx.options.seed):
            with ctx.part(f"{field} holding {name}"):
                response = send(text)
                ctx.expect(
                    response.status < 500,
                    f"answered {response.status}: neither accepted nor refused: {response.shown(200)}",
                    response,
                )
    for read in answered:
        with ctx.part(f"{read.label} after the hostile text"):
            response = read.read()
            ctx.expect(
                200 <= response.status < 300,
                f"answered {response.status} where it answered 2xx before the hostile text: {response.shown(200)}",
                response,
            )


TEXT_STATEMENT = (
    "Hostile text in every free-text field a client sends (lone surrogates as JSON escapes, and strings drawn "
    "from a maintained corpus of hostile strings) is accepted or refused with a 4xx, never a 5xx, and afterwards "
    "every list and read that answered before still answers 2xx{owners}"
)
TEXT_REF = (
    "RFC 8259 section 8.2 (a string with an unpaired surrogate: receivers' behaviour unpredictable, so a server "
    "refuses it or keeps text it can write back); {lists} (the lists and reads answer 200)"
)
TEXT_DEPENDS = (
    "draws the corpus strings with the seed; reads what the server holds, which other clients' hostile text "
    "(or an earlier run's) may already have broken"
)
