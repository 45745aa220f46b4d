"""The incremental frame readers: NDJSON lines and server-sent events, however the bytes are chunked."""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterable, Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conformance.check.streams import Frame, FrameError, ndjson_frames, sse_events
from tests.timing import Clock


def split(data: bytes, cuts: Iterable[int]) -> list[bytes]:
    points = sorted({c for c in cuts if 0 < c < len(data)})
    edges = [0, *points, len(data)]
    return [data[a:b] for a, b in itertools.pairwise(edges)]


def values(frames: Iterable[Frame]) -> list[Any]:
    return [f.value for f in frames]


class Counting:
    """A chunk source that records how far a reader pulled it (to prove a reader stops early)."""

    def __init__(self, chunks: Iterable[bytes]) -> None:
        self._chunks = iter(chunks)
        self.pulled = 0

    def __iter__(self) -> Iterator[bytes]:
        for chunk in self._chunks:
            self.pulled += 1
            yield chunk


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(10**6), 10**6) | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=8,
)
objects = st.dictionaries(st.text(max_size=6), json_values, max_size=4)


# --- NDJSON --------------------------------------------------------------------------------------


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    objs=st.lists(objects, min_size=1, max_size=6),
    cuts=st.lists(st.integers(0, 2000), max_size=12),
    ending=st.sampled_from([b"\n", b"\r\n"]),
    final_newline=st.booleans(),
)
def test_ndjson_any_chunking_gives_the_same_frames(
    objs: list[dict[str, Any]], cuts: list[int], ending: bytes, final_newline: bool
) -> None:
    body = ending.join(json.dumps(o, ensure_ascii=False).encode() for o in objs)
    body += ending if final_newline else b""
    whole = values(ndjson_frames([body]))
    assert whole == objs
    assert values(ndjson_frames(split(body, cuts))) == objs
    assert values(ndjson_frames(bytes([b]) for b in body)) == objs  # one byte at a time


def test_ndjson_frames_carry_index_and_raw_text() -> None:
    frames = list(ndjson_frames([b'{"a": 1}\n{"b": 2}\n']))
    assert [(f.index, f.raw, f.value) for f in frames] == [(0, '{"a": 1}', {"a": 1}), (1, '{"b": 2}', {"b": 2})]


def test_ndjson_several_objects_on_one_line() -> None:
    frames = list(ndjson_frames([b'{"a": 1} {"b": 2}{"c": 3}\n{"d": 4}\n']))
    assert values(frames) == [{"a": 1}, {"b": 2}, {"c": 3}, {"d": 4}]
    assert [f.index for f in frames] == [0, 1, 2, 3]
    assert frames[1].raw == '{"b": 2}'


def test_ndjson_blank_lines_are_skipped_and_last_line_may_lack_newline() -> None:
    assert values(ndjson_frames([b'\n{"a": 1}\n\n  \n{"b": 2}'])) == [{"a": 1}, {"b": 2}]
    assert list(ndjson_frames([])) == []
    assert list(ndjson_frames([b"", b"\n\n"])) == []


def test_ndjson_pretty_printed_object_names_its_first_line() -> None:
    pretty = json.dumps({"response": {"text": "hi"}}, indent=2).encode() + b"\n"
    with pytest.raises(FrameError, match=r"^line 1 is not a complete JSON object"):
        list(ndjson_frames([pretty]))


def test_ndjson_error_names_the_line_not_the_frame() -> None:
    # two lines of two objects each, then a pretty-printed object starting on line 3
    stream = b'{"a": 1} {"b": 2}\n{"c": 3} {"d": 4}\n{\n  "e": 5\n}\n'
    reader = ndjson_frames(split(stream, [5, 19, 30]))
    got = [next(reader) for _ in range(4)]
    assert values(got) == [{"a": 1}, {"b": 2}, {"c": 3}, {"d": 4}]
    with pytest.raises(FrameError, match=r"^line 3 is not a complete JSON object"):
        next(reader)


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        (b"[1, 2]", "holds a JSON list, not an object"),
        (b'"text"', "holds a JSON str, not an object"),
        (b"42", "holds a JSON int, not an object"),
        (b'{"a": 1} trailing', "is not a complete JSON object"),
        (b'{"a": NaN}', "is not a complete JSON object"),
        (b'{"a": Infinity}', "is not a complete JSON object"),
        (b'data: {"a": 1}', "is not a complete JSON object"),
    ],
)
def test_ndjson_rejects_non_objects(line: bytes, problem: str) -> None:
    with pytest.raises(FrameError, match=f"^line 2 {problem}"):
        list(ndjson_frames([b'{"ok": true}\n' + line + b"\n"]))


def test_ndjson_invalid_utf8_names_the_line() -> None:
    with pytest.raises(FrameError, match=r"^line 2 is not valid UTF-8"):
        list(ndjson_frames([b'{"a": 1}\n{"b": "\xff\xfe"}\n']))


def test_ndjson_utf8_split_across_chunks_is_fine() -> None:
    body = json.dumps({"t": "héllo ✓"}, ensure_ascii=False).encode() + b"\n"
    cut = body.index("✓".encode()) + 1  # inside the 3-byte character
    assert values(ndjson_frames([body[:cut], body[cut:]])) == [{"t": "héllo ✓"}]


def test_ndjson_max_frames_yields_exactly_the_cap_then_fails() -> None:
    reader = ndjson_frames([b'{"i": 1}\n' * 5], max_frames=3)
    got = [next(reader) for _ in range(3)]
    assert len(got) == 3
    with pytest.raises(FrameError, match="more than 3 frames"):
        next(reader)


def test_ndjson_max_frames_counts_objects_not_lines() -> None:
    with pytest.raises(FrameError, match="more than 2 frames"):
        list(ndjson_frames([b'{"a": 1} {"a": 2} {"a": 3}\n'], max_frames=2))
    with pytest.raises(FrameError, match="more than 1 frames"):
        list(ndjson_frames([b'{"a": 1}\n{"a": 2}'], max_frames=1))  # last line without newline too


def test_ndjson_line_cap_stops_reading_early() -> None:
    source = Counting(b"x" * 100 for _ in range(1000))  # an endless line
    with pytest.raises(FrameError, match=r"^line 1 is longer than 1000 bytes"):
        list(ndjson_frames(source, max_line_bytes=1000))
    assert source.pulled <= 11


def test_ndjson_line_cap_applies_to_complete_lines_too() -> None:
    with pytest.raises(FrameError, match=r"^line 2 is longer than 50 bytes"):
        list(ndjson_frames([b'{"a": 1}\n{"pad": "' + b"x" * 60 + b'"}\n'], max_line_bytes=50))


def test_ndjson_is_incremental() -> None:
    """A frame is yielded as soon as its line is complete, before later chunks exist."""

    def chunks() -> Iterator[bytes]:
        yield b'{"first": 1}\n{"sec'
        raise AssertionError("read past the first frame before it was consumed")

    assert next(ndjson_frames(chunks())).value == {"first": 1}


# --- SSE -----------------------------------------------------------------------------------------


def sse(*events: str, ending: str = "\n") -> bytes:
    return "".join(f"data: {e}{ending}{ending}" for e in events).encode()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    objs=st.lists(objects, min_size=1, max_size=6),
    cuts=st.lists(st.integers(0, 2000), max_size=12),
    endings=st.lists(st.sampled_from(["\n", "\r\n", "\r"]), min_size=1, max_size=4),
    comments=st.booleans(),
)
def test_sse_any_chunking_and_line_ending_gives_the_same_events(
    objs: list[dict[str, Any]], cuts: list[int], endings: list[str], comments: bool
) -> None:
    parts = []
    for n, obj in enumerate(objs):
        eol = endings[n % len(endings)]
        if comments:
            parts.append(f": keep-alive {n}{eol}")
        parts.append(f"event: chunk{eol}data: {json.dumps(obj, ensure_ascii=False)}{eol}{eol}")
    parts.append(f"data: [DONE]{endings[0]}{endings[0]}")
    body = "".join(parts).encode()
    expected = [*objs, None]
    assert values(sse_events([body])) == expected
    assert values(sse_events(split(body, cuts))) == expected
    assert values(sse_events(bytes([b]) for b in body)) == expected


def test_sse_done_sentinel_and_raw() -> None:
    frames = list(sse_events([sse('{"a": 1}', "[DONE]")]))
    assert [(f.index, f.raw, f.value) for f in frames] == [(0, '{"a": 1}', {"a": 1}), (1, "[DONE]", None)]


@pytest.mark.parametrize("ending", ["\n", "\r\n", "\r"])
def test_sse_line_endings(ending: str) -> None:
    assert values(sse_events([sse('{"a": 1}', '{"b": 2}', ending=ending)])) == [{"a": 1}, {"b": 2}]


def test_sse_crlf_split_between_chunks_is_one_line_end() -> None:
    # a CR at the end of a chunk and its LF in the next must not count as two line ends
    frames = list(sse_events([b'data: {"a": 1}\r', b'\ndata: {"b": 2}\r\n\r\n']))
    assert values(frames) == [None]
    assert frames[0].raw == '{"a": 1}\n{"b": 2}'


def test_sse_cr_only_stream_ending_with_cr() -> None:
    assert values(sse_events([b'data: {"a": 1}\r\r'])) == [{"a": 1}]
    assert values(sse_events([b'data: {"a": 1}\r', b"\r"])) == [{"a": 1}]


def test_sse_multi_line_data_is_joined_with_newlines() -> None:
    frames = list(sse_events([b'data: {"a":\ndata:  1,\ndata:"b": 2}\n\n']))
    assert frames[0].raw == '{"a":\n 1,\n"b": 2}'  # one leading space is stripped, not two
    assert frames[0].value == {"a": 1, "b": 2}


def test_sse_comments_and_other_fields_are_ignored() -> None:
    stream = b': hello\n:\nevent: update\nid: 7\nretry: 100\nunknown\ndata: {"a": 1}\n\n: bye\n\n'
    assert values(sse_events([stream])) == [{"a": 1}]


def test_sse_empty_data_dispatches_an_empty_event_but_blank_lines_alone_do_not() -> None:
    frames = list(sse_events([b"\n\n\ndata\n\ndata:\n\n\n"]))
    assert [f.raw for f in frames] == ["", ""]


def test_sse_leading_bom_is_ignored() -> None:
    assert values(sse_events([b"\xef\xbb\xbf", b'data: {"a": 1}\n\n'])) == [{"a": 1}]


def test_sse_non_json_data_has_no_value() -> None:
    assert values(sse_events([sse("hello world", '{"a": NaN}')])) == [None, None]


def test_sse_stream_ending_mid_event() -> None:
    with pytest.raises(FrameError, match=r"^the stream ended inside event 2 \(no blank line"):
        list(sse_events([b'data: {"a": 1}\n\ndata: {"b": 2}\n']))


def test_sse_stream_ending_mid_line() -> None:
    with pytest.raises(FrameError, match=r"^the stream ended in the middle of a line \(event 2\)"):
        list(sse_events([b'data: {"a": 1}\n\ndata: [DO']))


def test_sse_trailing_comment_without_newline_is_harmless() -> None:
    assert values(sse_events([b'data: {"a": 1}\n\n: bye'])) == [{"a": 1}]


def test_sse_invalid_utf8_names_the_event() -> None:
    with pytest.raises(FrameError, match=r"^event 2 is not valid UTF-8"):
        list(sse_events([b'data: {"a": 1}\n\ndata: "\xc3\x28"\n\n']))


def test_sse_max_events_yields_exactly_the_cap_then_fails() -> None:
    reader = sse_events([sse(*['{"i": 1}'] * 5)], max_events=3)
    assert len([next(reader) for _ in range(3)]) == 3
    with pytest.raises(FrameError, match="more than 3 events"):
        next(reader)


def test_sse_event_cap_counts_joined_data_lines() -> None:
    source = Counting(b"data: " + b"x" * 90 + b"\n" for _ in range(10_000))  # one event that never ends
    with pytest.raises(FrameError, match=r"^event 1 is longer than 1000 bytes"):
        list(sse_events(source, max_event_bytes=1000))
    assert source.pulled <= 12


def test_sse_line_cap_stops_reading_early() -> None:
    source = Counting(b"data: " + b"x" * 100 for _ in range(1000))  # a line that never ends
    with pytest.raises(FrameError, match="a line longer than 1000 bytes"):
        list(sse_events(source, max_event_bytes=1000))
    assert source.pulled <= 11


def test_sse_is_incremental() -> None:
    def chunks() -> Iterator[bytes]:
        yield b'data: {"first": 1}\n\ndata: {"sec'
        raise AssertionError("read past the first event before it was consumed")

    assert next(sse_events(chunks())).value == {"first": 1}


def test_readers_are_linear_on_many_small_lines() -> None:
    """Thousands of frames in one chunk parse quickly (no re-copying the buffer per line)."""

    nd = b'{"i": 1}\n' * 50_000
    ev = b'data: {"i": 1}\n\n' * 50_000
    clock = Clock()
    assert sum(1 for _ in ndjson_frames([nd], max_frames=100_000)) == 50_000
    assert sum(1 for _ in sse_events([ev], max_events=100_000)) == 50_000
    clock.assert_within(5, "reading 100,000 frames")  # quadratic, it takes minutes


def test_sse_events_say_how_they_were_framed() -> None:
    """A protocol that fixes one data: line an event and no other field reads the rest here."""
    raw = b'data: {"a": 1}\n\nevent: chunk\nid: 7\ndata: {"b":\ndata:  2}\n\nretry: 5\n\ndata: [DONE]\n\n'
    frames = list(sse_events([raw]))
    assert [(f.value, f.data_lines, f.fields) for f in frames] == [
        ({"a": 1}, 1, ()),
        ({"b": 2}, 2, ("event", "id")),
        (None, 1, ()),  # a block without data dispatches nothing, its retry: with it
    ]


def test_sse_reading_stops_at_the_terminating_event_whatever_the_connection_does_next() -> None:
    """[DONE] ends an OpenAI stream: a server may leave the connection open and idle after it (the openai
    client stops reading there), so a reader given ``end`` asks for no chunk past it."""

    def idle_after_done() -> Iterator[bytes]:
        yield b'data: {"a": 1}\r\n\r\n: keep-alive\r\nid: 2\r\nretry: 3000\r\ndata: [DONE]\r\n\r\n'
        raise AssertionError("read past [DONE]: a reader waiting here would wait for the idle connection")

    frames = list(sse_events(idle_after_done(), end="[DONE]"))
    assert [f.raw for f in frames] == ['{"a": 1}', "[DONE]"]
    assert frames[1].fields == ("id", "retry")  # comments skipped; the standard's fields told apart
