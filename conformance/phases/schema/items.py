"""The events of each stream the phase read, judged by the kit's rule (``events.items``) in place
of schemathesis's own event validation: the proxy judges the same events by the same judgment, so
the run and the proxy decide ``<PREFIX>-SCHEMA-005`` on a stream alike (issue 32)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from specs.documents import Spec

from ...check.judgments import Seen, events, judge


@dataclass(frozen=True, slots=True)
class Judged:
    """A stream's events judged: the judgment's facts and the problems it found (empty: held)."""

    facts: dict[str, Any]
    problems: list[str]


class ItemStreams:
    """The document's operations by label, to find the item schema of an answer's event stream."""

    def __init__(self, spec: Spec) -> None:
        self.spec = spec
        self.operations = {op.label: op for op in spec.operations()}

    def judged(self, label: str, interaction: Any) -> Judged | None:
        """The events of ``interaction``'s answer judged, when the document gives its operation and
        status an event stream with an item schema (its label is the stream requirement's fact,
        so the answer is read as events whatever it is labelled); None otherwise."""
        op, response = self.operations.get(label), interaction.response
        if op is None or response is None:
            return None
        schema = events.item_schema(self.spec, op, response.status_code)
        if schema is None:
            return None
        facts = events.facts_of(self.spec, schema)
        headers = {k: ", ".join(v) for k, v in dict(response.headers).items()}
        seen = Seen(
            interaction.request.method, interaction.request.uri, response.status_code, headers, response.content or b""
        )
        return Judged(facts, judge(events.ITEMS, seen, facts))
