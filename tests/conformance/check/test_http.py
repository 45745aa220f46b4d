"""The suite's bounded HTTP client: evidence, caps, error sentences; real sockets for timeouts."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator

import httpx
import pytest

from conformance.check.context import CheckFailed
from conformance.check.http import EVIDENCE_BODY_CHARS, Client, Limits, TargetError
from tests.hostile import NDJSON_FRAME, HostileServer, closed_port_url
from tests.timing import Clock

Handler = Callable[[httpx.Request], httpx.Response]


def client(handler: Handler, limits: Limits | None = None, headers: dict[str, str] | None = None) -> Client:
    return Client(
        "http://target.test/base/",
        limits or Limits(timeout=2.0),
        headers=headers,
        transport=httpx.MockTransport(handler),
    )


def json_ok(request: httpx.Request) -> httpx.Response:
    return httpx.Response(201, json={"task_id": "t1"}, headers={"X-Trace": "abc"})


# --- evidence ------------------------------------------------------------------------------------


def test_exchange_is_recorded_as_evidence() -> None:
    c = client(json_ok, headers={"Authorization": "Bearer secret"})
    response = c.post("/tasks", json={"input": "hi"}, params={"page": 2})
    assert response.status == 201
    assert response.json() == {"task_id": "t1"}
    assert response.content_type == "application/json"
    [ex] = c.log
    assert ex.method == "POST"
    assert ex.url == "http://target.test/base/tasks?page=2"  # base URL's trailing slash is not doubled
    assert ex.request_headers["authorization"] == "Bearer secret"
    assert ex.request_headers["content-type"] == "application/json"
    assert ex.request_body == '{"input":"hi"}'
    assert ex.status == 201
    assert ex.response_headers["x-trace"] == "abc"
    assert ex.response_body == '{"task_id":"t1"}'
    assert ex.error is None
    assert ex.elapsed_ms >= 0
    assert response.exchange is ex


def test_every_call_appends_to_the_log() -> None:
    c = client(json_ok)
    c.get("/a")
    c.put("/b", json={})
    c.delete("/c")
    assert [(e.method, e.url.rsplit("/", 1)[1]) for e in c.log] == [("GET", "a"), ("PUT", "b"), ("DELETE", "c")]


def test_auth_override() -> None:
    seen: list[str | None] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request.headers.get("authorization"))
        return httpx.Response(204)

    c = client(handler, headers={"Authorization": "Bearer default"})
    c.get("/x")
    c.get("/x", auth="")  # no Authorization at all
    c.get("/x", auth="other")
    c.get("/x", headers={"X-Extra": "1"})
    assert seen == ["Bearer default", None, "Bearer other", "Bearer default"]


def test_client_asks_for_uncompressed_bodies() -> None:
    seen: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request.headers["accept-encoding"])
        return httpx.Response(204)

    client(handler).get("/x")
    assert seen == ["identity"]


def test_evidence_body_is_truncated_with_a_note() -> None:
    big = "x" * (EVIDENCE_BODY_CHARS + 250)
    c = client(lambda r: httpx.Response(200, text=big))
    response = c.get("/big")
    assert response.text == big  # the check sees all of it
    assert response.exchange.response_body == "x" * EVIDENCE_BODY_CHARS + "... [250 more characters]"


def test_binary_evidence_is_readable_text() -> None:
    c = client(lambda r: httpx.Response(200, content=b"\x89PNG\xff\x00"))
    evidence = c.get("/img").exchange.response_body
    assert evidence is not None and evidence.startswith("\ufffdPNG")


def test_redirects_are_not_followed() -> None:
    c = client(lambda r: httpx.Response(302, headers={"Location": "/elsewhere"}))
    response = c.get("/x")
    assert response.status == 302
    assert len(c.log) == 1


# --- JSON errors ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "fragment"),
    [
        (b'{"task_id": ', "response body is not valid JSON"),
        (b"<html>oops</html>", 'got an HTML page: "oops"'),
        (b'{"a": "\xff\xfe"}', "not valid JSON"),
        (b"", "not valid JSON"),
    ],
)
def test_json_errors_are_check_failures(body: bytes, fragment: str) -> None:
    response = client(lambda r: httpx.Response(200, content=body)).get("/x")
    with pytest.raises(CheckFailed) as caught:
        response.json()
    assert fragment in str(caught.value)


# --- body cap ------------------------------------------------------------------------------------


def test_body_cap_from_content_length_reads_nothing() -> None:
    c = client(lambda r: httpx.Response(200, content=b"y" * 101), Limits(timeout=2.0, max_body_bytes=100))
    with pytest.raises(TargetError, match=r"response body of 101 bytes \(Content-Length\) exceeds the 100-byte cap"):
        c.get("/x")
    assert c.log[0].error is not None and "exceeds" in c.log[0].error
    assert c.log[0].status == 200


def test_body_cap_without_content_length_stops_reading() -> None:
    pulled = []

    def endless() -> Iterator[bytes]:
        for n in range(10_000):
            pulled.append(n)
            yield b"z" * 1000

    c = client(lambda r: httpx.Response(200, content=endless()), Limits(timeout=2.0, max_body_bytes=10_000))
    with pytest.raises(TargetError, match="response body exceeds the 10000-byte cap"):
        c.get("/x")
    assert len(pulled) <= 12


def test_body_at_the_cap_is_accepted() -> None:
    c = client(lambda r: httpx.Response(200, content=b"y" * 100), Limits(timeout=2.0, max_body_bytes=100))
    assert len(c.get("/x").body) == 100


# --- transport errors ----------------------------------------------------------------------------


def raising(exc: type[httpx.TransportError], text: str) -> Handler:
    def handler(request: httpx.Request) -> httpx.Response:
        raise exc(text, request=request)

    return handler


@pytest.mark.parametrize(
    ("exc", "expected", "unreachable"),
    [
        (httpx.ConnectError, "cannot connect to http://target.test/base/x: refused", True),
        (httpx.ConnectTimeout, "connecting to http://target.test/base/x timed out after 2 s", True),
        (httpx.ReadTimeout, "http://target.test/base/x sent nothing for 2 s (stalled)", False),
        (httpx.RemoteProtocolError, "http://target.test/base/x broke the HTTP exchange: refused", False),
        (httpx.ReadError, "http://target.test/base/x: connection reset (refused)", False),
    ],
)
def test_transport_errors_become_target_errors(
    exc: type[httpx.TransportError], expected: str, unreachable: bool
) -> None:
    c = client(raising(exc, "refused"))
    with pytest.raises(TargetError) as caught:
        c.get("/x")
    assert str(caught.value) == expected
    assert caught.value.unreachable is unreachable
    assert c.log[0].error == expected
    assert c.log[0].status is None


# --- streams (mock transport) --------------------------------------------------------------------


def test_stream_yields_chunks_and_keeps_a_transcript() -> None:
    def frames() -> Iterator[bytes]:
        yield b'{"a": 1}\n'
        yield b'{"b": 2}\n'

    c = client(lambda r: httpx.Response(200, content=frames(), headers={"Content-Type": "application/x-ndjson"}))
    with c.stream("POST", "/chat", json={}) as stream:
        assert stream.status == 200
        assert stream.content_type == "application/x-ndjson"
        assert list(stream.chunks()) == [b'{"a": 1}\n', b'{"b": 2}\n']
    assert c.log[0].response_body == '{"a": 1}\n{"b": 2}\n'
    assert c.log[0].error is None


def test_stream_byte_cap() -> None:
    def endless() -> Iterator[bytes]:
        for _ in range(100_000):
            yield b"data: x\n\n"

    c = client(lambda r: httpx.Response(200, content=endless()), Limits(timeout=2.0, max_body_bytes=1000))
    with pytest.raises(TargetError, match="stream exceeds 1000 bytes"), c.stream("GET", "/s") as stream:
        stream.read()
    assert c.log[0].error is not None and "exceeds" in c.log[0].error
    assert c.log[0].response_body is not None and len(c.log[0].response_body) <= EVIDENCE_BODY_CHARS


def test_stream_time_budget() -> None:
    def slow() -> Iterator[bytes]:
        for _ in range(100):
            time.sleep(0.05)
            yield b"x"

    c = client(lambda r: httpx.Response(200, content=slow()), Limits(timeout=2.0, stream_seconds=0.3))
    clock = Clock()
    with pytest.raises(TargetError, match=r"stream still open after 0.3 s"), c.stream("GET", "/s") as stream:
        stream.read()
    clock.assert_within(1.7, "the stream", plus=0.3, cap=4)  # read whole, it takes 5 s


# --- real sockets --------------------------------------------------------------------------------


def test_connection_refused_on_a_real_port() -> None:
    c = Client(closed_port_url(), Limits(timeout=1.0))
    clock = Clock()
    with pytest.raises(TargetError, match="cannot connect to") as caught:
        c.get("/")
    assert caught.value.unreachable
    clock.assert_within(2, "the refusal")


def test_stall_before_headers_is_a_read_timeout() -> None:
    with HostileServer("stall_headers") as url:
        c = Client(url, Limits(timeout=0.5))
        clock = Clock()
        with pytest.raises(TargetError, match=r"sent nothing for 0.5 s \(stalled\)"):
            c.get("/x")
        clock.stop()
    assert clock.elapsed > 0.4
    clock.assert_within(2.5, "the stall", plus=0.5)


def test_stall_mid_body_names_what_arrived() -> None:
    with HostileServer("stall_mid_stream") as url:
        c = Client(url, Limits(timeout=0.5))
        clock = Clock()
        with pytest.raises(TargetError, match=r"stalled mid-body: HTTP 200 and \d+ body bytes"):
            c.get("/x")
        clock.assert_within(2.5, "the stall", plus=0.5)
    assert c.log[0].status == 200


def test_trickling_body_hits_the_exchange_deadline() -> None:
    """Each read succeeds (a byte every 0.2 s) but the exchange as a whole is bounded."""
    with HostileServer("trickle") as url:
        c = Client(url, Limits(timeout=0.6))
        clock = Clock()
        with pytest.raises(TargetError, match=r"response not complete after 0.6 s \(trickling\)"):
            c.get("/x")
        clock.assert_within(2.4, "the trickle", plus=0.6)


def test_stream_stall_after_a_frame() -> None:
    with HostileServer("stall_mid_stream") as url:
        c = Client(url, Limits(timeout=0.5, stream_seconds=30))
        got: list[bytes] = []
        clock = Clock()
        with (
            pytest.raises(TargetError, match=r"stream stalled: nothing received for 0.5 s"),
            c.stream("POST", "/chat", json={}) as stream,
        ):
            for chunk in stream.chunks():
                got.append(chunk)
        clock.assert_within(2.5, "the stall", plus=0.5)
    assert b"".join(got) == NDJSON_FRAME
    assert c.log[0].error is not None and "stalled" in c.log[0].error


def test_stream_reset_mid_body() -> None:
    with HostileServer("reset") as url:
        c = Client(url, Limits(timeout=2.0))
        with pytest.raises(TargetError, match=r"reset|broke"), c.stream("GET", "/s") as stream:
            stream.read()


def test_connection_reset_before_any_response() -> None:
    with HostileServer("reset_before_response") as url:
        c = Client(url, Limits(timeout=2.0))
        with pytest.raises(TargetError, match="connection reset"):
            c.get("/x")
