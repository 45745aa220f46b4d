"""The edge corpus: the values are what their names say, the same every run, and an echo's
difference is told in a way a reader can act on."""

from __future__ import annotations

import json
import unicodedata
from typing import Any

import pytest

from conformance.check import edges


def test_every_text_is_what_its_name_says() -> None:
    by_name = {e.name: e.value for e in edges.TEXTS}
    assert len(by_name) == len(edges.TEXTS)
    latin = by_name["Latin-1 text (precomposed accents)"]
    assert all(ord(c) < 256 for c in latin) and unicodedata.is_normalized("NFC", latin)
    assert not unicodedata.is_normalized("NFC", by_name["combining marks (decomposed, NFD)"])
    assert any(ord(c) > 0xFFFF for c in by_name["emoji and astral characters"])
    assert any(unicodedata.bidirectional(c) in ("R", "AL") for c in by_name["right-to-left text"])
    assert any(unicodedata.east_asian_width(c) == "W" for c in by_name["CJK text"])
    assert {'"', "\\", "/"} <= set(by_name["JSON-special characters"])
    assert {"\t", "\n", "\r", "\x07", "\x7f", "\u2028"} <= set(by_name["control characters"])
    padded = by_name["spaces at both ends"]
    assert (padded != padded.strip() and padded[0] == padded[-1] == " ") or padded[-1].isspace()
    long = next(e for e in edges.TEXTS if e.name.startswith("long text"))
    assert len(long.value) == edges.LONG_CHARS and long.refusable and len(long.value.encode()) > edges.LONG_CHARS
    assert [e.name for e in edges.TEXTS if e.refusable] == ["empty text", "NUL character", long.name]


def test_the_corpus_is_the_same_every_run_and_json_safe() -> None:
    assert edges.json_values() == edges.json_values()
    values = edges.json_values()
    assert json.loads(json.dumps(values)) == values
    assert all(e.value in values for e in edges.SHORT_TEXTS)  # each text is a key too
    assert values["integer beyond 2^53"] != float(values["integer beyond 2^53"])  # type: ignore[arg-type]
    assert edges.uploads(0) == edges.uploads(0) and edges.uploads(0) != edges.uploads(1)
    assert [u.name for u in edges.uploads(0)] == [u.name for u in edges.uploads(1)]


def test_the_files_cover_names_sizes_and_collisions() -> None:
    files = {u.name: u for u in edges.uploads(0)}
    assert len(files) == len(edges.uploads(0))
    assert len(files[f"{edges.NAME_BYTES}-byte name"].file_name.encode()) == edges.NAME_BYTES
    assert files["dot-leading name"].file_name.startswith(".")
    assert "." not in files["name without extension"].file_name
    assert files["empty file"].data == b"" and len(files["1 MiB file"].data) == edges.MIB
    assert b"\x00" in files["binary with NUL bytes"].data
    first, second = files["same name, first upload"], files["same name, second upload"]
    assert (first.file_name, first.relative_path) == (second.file_name, second.relative_path)
    assert first.data != second.data and second.refusable and not first.refusable
    assert files["a file named docs"].file_name == files["relative_path docs, the name of a file"].relative_path
    assert files["a file in folder lib"].relative_path == files["a file named lib, the name of a folder"].file_name
    assert all('"' not in u.file_name for u in files.values())  # form encoders send it as %22


def test_binary_holds_every_byte_at_any_size() -> None:
    data = edges.binary(0, 4096)
    assert len(data) == 4096 and set(data) == set(range(256)) and b"\r\n--" in data
    assert edges.binary(0, 10) == edges.binary(0, 10) and len(edges.binary(0, 10)) >= 256


@pytest.mark.parametrize(
    ("got", "sent", "expected"),
    [
        ("cafe\u0301", "caf\u00e9", "normalised to NFD"),
        ("caf\u00e9", "cafe\u0301", "normalised to NFC"),
        ("x", "  x ", "whitespace at its ends trimmed"),
        ("abc", "abcdef", "3 characters for the 6 sent (cut short), first differing at character 3"),
        ("ab?d", "ab\U0001f680d", 'first differing at character 2: sent "ab\\ud83d\\ude80d", got "ab?d"'),
        ({"a": 1, "b": 2}, {"a": 1, "b": 3}, '1 member(s): "b": sent 3, got 2'),
        (None, "x", 'null is not the "x" sent'),
    ],
)
def test_a_difference_says_what_happened(got: Any, sent: Any, expected: str) -> None:
    assert expected in edges.difference(got, sent)


def test_a_long_value_is_shown_briefly() -> None:
    text = edges.difference("x" * 70000, "x" * 65536 + "y")
    assert len(text) < 300 and "70000 characters for the 65537 sent" in text


@pytest.mark.parametrize(
    ("a", "b", "equal"),
    [
        ({"a": [1, {"b": None}]}, {"a": [1, {"b": None}]}, True),
        (True, 1, False),
        ({"x": False}, {"x": 0}, False),
        (1, 1.0, True),
        ({"a": 1}, {"a": 1, "b": 2}, False),
        ([1, 2], [2, 1], False),
        ("1", 1, False),
        (None, {}, False),
        ({"a": 1, "b": 2}, {"b": 2, "a": 1}, True),  # key order is no part of an object (RFC 8259 section 4)
    ],
)
def test_same_tells_json_values_apart(a: Any, b: Any, equal: bool) -> None:
    assert edges.same(a, b) is equal


@pytest.mark.parametrize(
    ("sent", "got", "equal"),
    [
        (2**53 + 1, 2**53, True),  # a store of doubles: RFC 8259 section 6, I-JSON's binary64
        (2**53 + 1, float(2**53), True),
        (-(2**63), -9.223372036854776e18, True),
        (0.1 + 0.2, 0.30000000000000004, True),
        (2**53 - 1, 2**53 - 2, False),  # within I-JSON's exact integers: every digit counts
        (0.1 + 0.2, 0.30000001192092896, False),  # a 32-bit float: precision lost within binary64
        (0.1 + 0.2, 0.3, False),
        (10**400, 10**400 + 1, False),  # beyond binary64's range no double stands for either
        ([2**64 + 1], [2**64], True),
    ],
)
def test_numbers_compare_at_the_precision_the_rfcs_let_a_server_keep(sent: Any, got: Any, equal: bool) -> None:
    assert edges.same(got, sent) is equal
