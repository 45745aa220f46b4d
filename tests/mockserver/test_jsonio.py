"""The fast JSON paths (orjson) decide and encode exactly as the standard library did."""

from __future__ import annotations

import json

import pytest

from mockserver.jsonio import dumps
from mockserver.validation import JsonBodyError, parse_json

ACCEPTED = [
    b'{"input": "Write \\"Washington\\"", "additional_input": {"n": 1, "x": 1.5e-3, "ok": true, "no": null}}',
    b"[1, -0, 1E2, 0.1, 12345678901234567, -9223372036854775808]",
    b'{"big": 123456789012345678901234567890, "neg": -98765432109876543210}',  # beyond 64 bits: kept exact
    b'"\\ud83d\\ude00 caf\\u00e9 \xc3\xa9"',
    b'\xef\xbb\xbf{"bom": 1}',
    b'{"a": 1, "a": 2}',
]
REFUSED = [b"[NaN]", b"Infinity", b"1e400", b'"\\ud800"', b"[1,]", b"", b"{", b"[" * 101 + b"]" * 101]


@pytest.mark.parametrize("raw", ACCEPTED)
def test_parsed_values_are_those_of_the_standard_library(raw: bytes) -> None:
    parsed = parse_json(raw)
    expected = json.loads(raw.decode("utf-8-sig"))
    assert parsed == expected
    assert json.dumps(parsed) == json.dumps(expected)  # types too: an int stays an int


@pytest.mark.parametrize("raw", REFUSED)
def test_refused_bodies_stay_refused(raw: bytes) -> None:
    with pytest.raises(JsonBodyError):
        parse_json(raw)


def test_encoding_is_compact_json_and_falls_back_for_what_orjson_refuses() -> None:
    body = {"id": "t-1", "n": [1, 2.5, None, True], "text": "café"}
    assert json.loads(dumps(body)) == body and b" " not in dumps(body)
    assert dumps({"big": 2**70}) == b'{"big":1180591620717411303424}'
    assert json.loads(dumps({"lone": "\ud800"})) == {"lone": "\ud800"}  # escaped, not a crash
