"""Messages quote a server's values as JSON, HTML error pages by their one useful line, and a
finding keeps its key across the change from Python's reprs."""

from __future__ import annotations

from typing import Any

import pytest

from conformance.check.shown import body, codepoints, cut, page_line, shown
from conformance.verdicts.findings import digest

VALUES: list[Any] = [
    "task-1",
    "it's",
    'say "hi"',
    "résumé 中文 🚀",
    "a\nb\\c",
    42,
    3.5,
    [1, "x", [2.5]],
    {"task_id": "6f1c1a52-0d6e-4a0b-9a55-3f1a2b3c4d5e", "input": "hello", "additional_input": {"n": 1}},
    [],
    {},
]


@pytest.mark.parametrize("value", VALUES, ids=repr)
def test_a_finding_keeps_its_key_when_its_message_quotes_json(value: Any) -> None:
    """Baselines store finding keys: the digest blanks a JSON value as it blanked its repr."""
    assert digest(f"getAgentTask: input is {value!r}, expected x") == digest(
        f"getAgentTask: input is {shown(value)}, expected x"
    )


def test_values_are_json_on_one_line_and_cut_saying_how_long() -> None:
    assert shown({"a": None, "b": [True, "é"]}) == '{"a": null, "b": [true, "é"]}'
    assert shown("x" * 500, 10) == '"xxxxxxxxx..." (502 characters)'
    assert shown(b"text") == '"text"' and shown(b"\x00\xff\x10") == "<3 bytes: 00 ff 10>"
    assert shown({1, 3, 2}) == "[1, 2, 3]" and shown((1, 2)) == "[1, 2]"
    assert codepoints("cafe\u0301") == '"cafe\\u0301"'


def test_a_cut_ends_between_tokens_never_inside_an_escape() -> None:
    """A value cut short ends after a word or a separator near the limit, keeps escapes whole (an
    even run of backslashes is escaped backslashes), closes the JSON string it cut, and says so."""
    assert shown({"input": "hello world and then some more words", "n": 12345}, 30) == (
        '{"input": "hello world and..." (61 characters)'
    )
    assert (
        cut("plain message text that is long enough to need a cut", 30)
        == "plain message text that is... (52 characters)"
    )
    for limit in range(10, 30):
        text = codepoints("é" * 100, limit)  # "\u00e9\u00e9...
        assert text.split("...")[0].count("\\u00e9") * 6 + 1 == len(text.split("...")[0]), (limit, text)
    assert cut('"a' + "\\\\" * 10 + '"', 6) == '"a\\\\\\\\..." (23 characters)'
    assert cut('"a' + "\\" + "n" * 30 + '"', 3) == '"a..." (34 characters)'


def test_a_finding_keeps_its_key_whatever_length_the_value_it_cut() -> None:
    """The cut closes the string, so the digest blanks the cut value like a whole one."""
    keys = {digest(f"got {shown({'id': 'x' * n, 'text': 'y' * 300})}, expected z") for n in range(3, 40)}
    assert len(keys) == 1


def test_an_html_error_page_is_shown_by_its_one_useful_line() -> None:
    nginx = (
        "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1>"
        "</center>\r\n<hr><center>nginx/1.25.3</center>\r\n</body>\r\n</html>\r\n"
    )
    assert page_line(nginx) == "502 Bad Gateway"
    assert body(nginx.encode(), "text/html") == 'an HTML page: "502 Bad Gateway"'
    untitled = "<!DOCTYPE html><html><head><style>h1{}</style></head><body><h1>Not &amp; Found</h1></body></html>"
    assert page_line(untitled) == "Not & Found"
    bare = "<!doctype html><body><script>var x = 1;</script><div>Service <b>Unavailable</b></div></body>"
    assert page_line(bare) == "Service Unavailable"
    assert page_line('{"message": "<b>not a page</b>"}') is None
    assert page_line("<p>a fragment, not a page</p>") is None
    assert body(b"<h1>Gateway Timeout</h1><p>upstream</p>", "text/html; charset=utf-8") == (
        'an HTML page: "Gateway Timeout"'
    )


def test_an_answer_body_is_shown_as_json_text_or_bytes() -> None:
    assert body(b'{"detail":"Not Found"}', "application/json") == '{"detail": "Not Found"}'
    assert body(b"plain words", "text/plain") == '"plain words"'
    assert body(b"", "") == "(no body)"
    assert body(bytes(range(8)), "application/octet-stream") == "<8 bytes: 00 01 02 03 04 05 06 07>"


def test_a_lone_surrogate_is_shown_as_its_escape_so_every_report_can_be_written() -> None:
    import json

    from conformance.check.shown import lone_escaped

    text = shown({"input": "a\ud800b \U0001f680"})
    assert text == '{"input": "a\\ud800b \U0001f680"}'
    text.encode("utf-8")  # writable: a report holding it no longer fails to be written
    assert json.loads(lone_escaped('"\udfff"')) == "\udfff"  # JSON text keeps its value
