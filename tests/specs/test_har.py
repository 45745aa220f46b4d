"""specs/har.py: archives that a HAR validator accepts, bodies and sizes as they were recorded."""

from __future__ import annotations

import base64
import json

import pytest

from specs.har import HarEntry, archive, entry, redacted
from tests.har import har_problems

STARTED = 1_767_225_600.25  # 2026-01-01T00:00:00.250Z


def _exchange(**overrides: object) -> HarEntry:
    fields: dict[str, object] = {
        "started": STARTED,
        "method": "post",
        "url": "http://127.0.0.1:8000/ap/v1/agent/tasks?page=2&empty=",
        "request_headers": [("Content-Type", "application/json"), ("Cookie", "a=1; b=2")],
        "request_body": b'{"input": "caf\xc3\xa9"}',
        "status": 200,
        "response_headers": [("Content-Type", "application/json"), ("Set-Cookie", "sid=x; Path=/; HttpOnly")],
        "response_body": b'{"task_id": "t1"}',
        "time_ms": 12.5,
        "wait_ms": 10.0,
    }
    fields.update(overrides)
    return HarEntry(**fields)  # type: ignore[arg-type]


def test_an_archive_of_ordinary_exchanges_is_valid_har() -> None:
    doc = archive([_exchange(), _exchange(method="GET", request_body=b"", started=STARTED - 1)], "kit", "1.0")
    assert har_problems(doc) == []
    log = doc["log"]
    assert log["version"] == "1.2" and log["creator"] == {"name": "kit", "version": "1.0"}
    first, second = log["entries"]
    assert first["request"]["method"] == "GET" and "postData" not in first["request"]  # oldest first
    assert second["startedDateTime"] == "2026-01-01T00:00:00.250Z"
    request = second["request"]
    assert request["queryString"] == [{"name": "page", "value": "2"}, {"name": "empty", "value": ""}]
    assert request["cookies"] == [{"name": "a", "value": "1"}, {"name": "b", "value": "2"}]
    assert request["postData"] == {"mimeType": "application/json", "text": '{"input": "café"}'}
    assert request["bodySize"] == 18  # bytes, not characters
    response = second["response"]
    assert response["statusText"] == "OK" and response["content"]["text"] == '{"task_id": "t1"}'
    assert response["cookies"] == [{"name": "sid", "value": "x", "path": "/", "httpOnly": True}]
    assert second["timings"]["wait"] == 10.0 and second["timings"]["receive"] == 2.5
    json.dumps(doc)  # plain data


def test_binary_bodies_go_as_base64_and_a_cut_body_says_what_it_had() -> None:
    raw = bytes(range(256))
    ex = _exchange(
        request_headers=[("Content-Type", "application/octet-stream")],
        request_body=raw,
        response_headers=[("Content-Type", "text/event-stream")],
        response_body=b"data: 1\n\n",
        response_size=90_000,
    )
    doc = archive([ex], "kit", "1.0")
    assert har_problems(doc) == []
    e = doc["log"]["entries"][0]
    assert base64.b64decode(e["request"]["postData"]["text"]) == raw
    assert e["request"]["postData"]["_encoding"] == "base64"
    assert e["response"]["content"] == {
        "size": 90_000,
        "mimeType": "text/event-stream",
        "text": "data: 1\n\n",
        "comment": "the first 9 of 90000 bytes kept",
    }
    picture = entry(_exchange(response_body=b"\x89PNG\r\n\x1a\n\x00"))["response"]["content"]
    assert picture["encoding"] == "base64" and base64.b64decode(picture["text"]) == b"\x89PNG\r\n\x1a\n\x00"


def test_an_exchange_without_an_answer_is_status_0() -> None:
    ex = _exchange(status=0, response_headers=[], response_body=b"", comment="the upstream sent nothing for 30 s")
    doc = archive([ex], "kit", "1.0")
    assert har_problems(doc) == []
    response = doc["log"]["entries"][0]["response"]
    assert response["status"] == 0 and response["statusText"] == "" and response["bodySize"] == -1
    assert doc["log"]["entries"][0]["comment"] == "the upstream sent nothing for 30 s"


def test_the_validator_refuses_what_is_not_har() -> None:
    """The schema test can fail: a broken archive is named, field by field."""
    doc = archive([_exchange()], "kit", "1.0")
    del doc["log"]["entries"][0]["timings"]
    doc["log"]["entries"][0]["response"]["status"] = "200"
    problems = har_problems(doc)
    assert any("timings" in p for p in problems) and any("status" in p for p in problems), problems


def test_custom_fields_start_with_an_underscore() -> None:
    e = entry(_exchange(extra={"_violations": [{"requirement": "AP-TASK-002"}]}))
    assert e["_violations"] == [{"requirement": "AP-TASK-002"}]
    with pytest.raises(ValueError, match="start with '_'"):
        entry(_exchange(extra={"violations": []}))


def test_credentials_are_redacted_keeping_the_scheme() -> None:
    headers = [("Authorization", "Bearer abc"), ("Cookie", "sid=1"), ("Accept", "*/*")]
    assert redacted(headers) == [("Authorization", "Bearer <redacted>"), ("Cookie", "<redacted>"), ("Accept", "*/*")]
