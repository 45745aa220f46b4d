"""The property-based phase reads an event stream to its protocol's end event (the manifest's
``stream_end``), as schemathesis reads it (by the raw body's ``read1``): a stream that idles after
that event has ended; one that idles before it is read on, to the bound that makes it a stall."""

from __future__ import annotations

from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import pytest

from conformance.check import internals
from conformance.phases.schema.ends import EndedAtEvent, end_at_event
from specs.documents import PROTOCOLS

DONE = "[DONE]"
CHUNK = b'data: {"object": "chat.completion.chunk"}\n\n'


class Idles(Exception):
    """The fake connection was read past what the server sent: a real one would block here."""


class FakeRaw:
    """A raw body that sends ``chunks`` and then idles (raises ``Idles`` where a socket would block)."""

    def __init__(self, *chunks: bytes) -> None:
        self.chunks = list(chunks)
        self.closed = False

    def read1(self, amt: int | None = None, decode_content: bool | None = None) -> bytes:
        if not self.chunks:
            raise Idles
        return self.chunks.pop(0)

    def close(self) -> None:
        self.closed = True


def read(raw: Any) -> Iterator[bytes]:
    """The stream as schemathesis reads it (its ``_iter_event_stream``)."""
    return internals.get("schemathesis.iter_event_stream")(SimpleNamespace(raw=raw))


def test_a_stream_that_idles_after_its_end_event_has_ended() -> None:
    raw = FakeRaw(CHUNK, CHUNK + b"data: [DONE]\n\n")
    assert b"".join(read(EndedAtEvent(raw, DONE))) == CHUNK * 2 + b"data: [DONE]\n\n"


def test_an_end_event_split_across_chunks_still_ends_it() -> None:
    raw = FakeRaw(CHUNK, b"data: [DO", b"NE]\r", b"\n\r\n")
    assert b"".join(read(EndedAtEvent(raw, DONE))).endswith(b"data: [DONE]\r\n\r\n")


@pytest.mark.parametrize(
    "chunks",
    [
        (CHUNK, CHUNK),  # no end event yet: the server stalled mid-stream
        (CHUNK, b'data: "[DONE]"\n\n'),  # JSON text that says [DONE] is not the end event
        (b"\xff\xfe\n\n", b"data: [DONE]\n\n"),  # not framed as events: read to the close, as before
    ],
)
def test_a_stream_that_idles_before_its_end_event_is_read_on(chunks: tuple[bytes, ...]) -> None:
    """The control: the wrapper reads on, so the bound still cuts the stream short (a stall)."""
    with pytest.raises(Idles):
        b"".join(read(EndedAtEvent(FakeRaw(*chunks), DONE)))


def test_the_rest_is_the_raw_bodys_own() -> None:
    raw = FakeRaw()
    wrapped = EndedAtEvent(raw, DONE)
    wrapped.close()
    assert raw.closed


def test_a_protocol_without_an_end_event_reads_to_the_close() -> None:
    response = SimpleNamespace(raw=FakeRaw(CHUNK))
    end_at_event(response, None)
    assert isinstance(response.raw, FakeRaw)
    end_at_event(response, DONE)
    assert isinstance(response.raw, EndedAtEvent)


def test_the_manifests_declare_the_end_events_their_scenario_checks_read_to() -> None:
    from conformance.protocols.sgr_agent_core.requirements import DONE as SGR_DONE

    assert PROTOCOLS["sgr-agent-core"].stream_end == SGR_DONE
    assert PROTOCOLS["neuro-san"].stream_end is None  # its NDJSON stream ends when the server closes it
