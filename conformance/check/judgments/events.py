"""Each event of a server-sent event stream holds the item schema the document gives it (OpenAPI
3.2's ``itemSchema``): ``events.items``. An event is judged as the object an SSE client dispatches
(WHATWG): ``data`` (its lines joined), ``event`` (``message`` when not sent), ``id`` (the last one
sent, carried over), ``retry`` (when a number), JSON content named by ``contentMediaType`` and
``contentSchema`` asserted. One rule for every protocol whose document declares an item schema,
called by the run's property-based phase (on each stream it read, in place of schemathesis's own
event validation), by the proxy's document judge (event by event, through ``Items``), and by replay.
A stream that cannot be read as events past some point (not UTF-8, cut inside an event) is judged
up to there: its framing is the protocol's stream requirement's fact."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from functools import cache
from typing import Any

from specs.documents import Operation, Spec, load
from specs.schemas import SchemaSet

from ..shown import shown
from ..streams import Frame, FrameError, SseReader
from .base import Facts, Seen, judgment

ITEMS = "events.items"
SSE = "text/event-stream"
MAX_PROBLEMS = 3
"""Events reported per stream (the first ones); the rest of the stream is still read."""


def item_schema(spec: Spec, op: Operation, status: int) -> Mapping[str, Any] | None:
    """The item schema the document gives ``op``'s event stream answered with ``status`` (None:
    the document gives that answer no event stream with one). By status, as the document judge
    finds an answer: the exact code, its class (``2XX``), ``default``."""
    found = spec.response(op, status)
    if found is None:
        return None
    media = (found.get("content") or {}).get(SSE)
    schema = media.get("itemSchema") if isinstance(media, dict) else None
    return schema if isinstance(schema, dict) else None


def facts_of(spec: Spec, schema: Mapping[str, Any]) -> dict[str, Any]:
    """The judgment's facts: the document (its protocol and profile) and the item schema as it
    writes it (its ``$ref``s name the document's components)."""
    return {"document": spec.info.id, "profile": spec.profile, "schema": dict(schema)}


class Items:
    """One stream's events judged as they come (the proxy feeds it frame by frame; the judgment,
    a whole stream): the ``id`` an event carries over is the stream's."""

    def __init__(self, schemas: SchemaSet, schema: Mapping[str, Any]) -> None:
        self.schemas = schemas
        self.schema = schema
        self.last_id: str | None = None

    def item(self, frame: Frame) -> dict[str, Any]:
        """The event as an SSE client dispatches it."""
        out: dict[str, Any] = {"data": frame.raw, "event": "message"}
        for name, value in zip(frame.fields, frame.values, strict=False):
            if name == "event":
                out["event"] = value or "message"
            elif name == "id" and "\x00" not in value:
                self.last_id = value
            elif name == "retry" and value.isascii() and value.isdigit():
                out["retry"] = int(value)
        if self.last_id is not None:
            out["id"] = self.last_id
        return out

    def problems(self, frame: Frame) -> list[str]:
        """How the event departs from the item schema (empty: it holds)."""
        item = self.item(frame)
        for error in self.schemas.validator(self.schema, content=True).iter_errors(item):
            path = "".join(f"/{part}" for part in error.instance_path) or "/"
            return [f"event {frame.index + 1} {shown(frame.raw, 100)}: {path}: {_reason(error)}"]
        return []


def _reason(error: Any) -> str:
    """The error's message; for ``anyOf``/``oneOf``, why each alternative failed (what a person
    needs: which branch was meant and what it lacked)."""
    branches = getattr(error.kind, "context", None)
    if not branches:
        return str(error.message)
    why = "; ".join(str(found[0].message) for found in branches if found)
    return f"no alternative holds ({why})" if why else str(error.message)


@cache
def _schemas(document: str, profile: str | None) -> SchemaSet:
    return SchemaSet(load(document, profile).raw)


@judgment(ITEMS)
def items(seen: Seen, facts: Facts) -> list[str]:
    """Each event of the stream ``seen`` answered holds the item schema. Facts: ``document`` (the
    protocol id), ``profile``, ``schema`` (the item schema, as ``facts_of`` gives it)."""
    judge = Items(_schemas(str(facts["document"]), facts.get("profile")), facts["schema"])
    reader = SseReader()

    def frames() -> Iterator[Frame]:
        yield from reader.feed(seen.body)
        yield from reader.close()

    found: list[str] = []
    try:
        for frame in frames():
            found += judge.problems(frame)
    except FrameError:
        pass  # judged up to where it stops being events: the framing is the stream requirement's
    return found[:MAX_PROBLEMS]
