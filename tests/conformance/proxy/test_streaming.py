"""Streams pass through as they arrive, byte for byte, and many clients at once lose nothing."""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import httpx

from conformance.proxy.forward import ProxyConfig, ProxyServer
from conformance.proxy.report import run_result
from conformance.proxy.wire import REST_S
from conformance.verdicts.results import Status
from tests.timing import Deadline

from .conftest import proxied

AGENT = "sgr_agent_3f2b8c1e-5d4a-4e7b-9c2d-1a2b3c4d5e6f"
CHUNK = (
    b'data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"'
    + AGENT.encode()
    + b'","choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":null}]}\n\n'
)
LAST = (
    b'data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"'
    + AGENT.encode()
    + b'","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n'
)


def _chunked(data: bytes) -> bytes:
    return f"{len(data):x}\r\n".encode() + data + b"\r\n"


def _read_request(conn: socket.socket) -> None:
    """A request's head and its Content-Length body."""
    data = b""
    while b"\r\n\r\n" not in data:
        piece = conn.recv(65536)
        if not piece:
            return
        data += piece
    head, _, body = data.partition(b"\r\n\r\n")
    length = max(
        (
            int(v)
            for k, _, v in (line.partition(b":") for line in head.split(b"\r\n")[1:])
            if k.strip().lower() == b"content-length"
        ),
        default=0,
    )
    while len(body) < length:
        piece = conn.recv(65536)
        if not piece:
            return
        body += piece


HEAD = (
    b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n"
    b"X-Agent-ID: " + AGENT.encode() + b"\r\nX-Agent-Model: sgr_agent\r\nTransfer-Encoding: chunked\r\n\r\n"
)


def sse_upstream(first: bytes, rest: Callable[[socket.socket], None]) -> tuple[socket.socket, int]:
    """An SSE upstream for one exchange: it reads the whole request (a stream that begins before
    its request ended is not judged), sends the head and ``first``, then leaves the rest to ``rest``."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()

    def serve() -> None:
        conn, _ = listener.accept()
        with conn:
            _read_request(conn)
            conn.sendall(HEAD + first)
            with contextlib.suppress(OSError):
                rest(conn)

    threading.Thread(target=serve, daemon=True).start()
    return listener, listener.getsockname()[1]


def held_stream_upstream(release: threading.Event) -> tuple[socket.socket, int]:
    """An SSE upstream that sends its first event, then waits for ``release`` before the rest:
    a proxy that buffered to the end would never deliver that first event."""

    def rest(conn: socket.socket) -> None:
        release.wait(20)
        conn.sendall(_chunked(LAST) + b"0\r\n\r\n")

    return sse_upstream(_chunked(CHUNK), rest)


def test_a_stream_is_forwarded_event_by_event_and_judged() -> None:
    release = threading.Event()
    listener, port = held_stream_upstream(release)
    body = {"model": "sgr_agent", "messages": [{"role": "user", "content": "hi"}], "stream": True}
    with (
        listener,
        ProxyServer(ProxyConfig("sgr-agent-core", f"http://127.0.0.1:{port}")) as proxy,
        httpx.stream("POST", proxy.url + "/v1/chat/completions", json=body, timeout=10) as answer,
    ):
        pieces = answer.iter_raw()
        received = b""
        while len(received) < len(CHUNK):
            received += next(pieces)  # arrives while the upstream still holds the rest back
        release.set()
        received += b"".join(pieces)
        deadline = Deadline(5)  # judged after the bytes went on: wait for the verdict, bounded
        while proxy.observer.committed < 1 and not deadline.passed():
            time.sleep(0.01)
    assert received == CHUNK + LAST
    statuses = {r.requirement.id: r.status for r in run_result(proxy.observer).results}
    for rid in (
        "SGR-STREAM-001",
        "SGR-STREAM-002",
        "SGR-STREAM-004",
        "SGR-STREAM-005",
        "SGR-STREAM-006",
        "SGR-STREAM-007",
    ):
        assert statuses[rid] is Status.PASSED, rid


def test_two_hundred_concurrent_clients_lose_nothing() -> None:
    with (
        proxied("agent-protocol") as p,
        httpx.Client(base_url=p.url, timeout=30, limits=httpx.Limits(max_connections=200)) as client,
    ):

        def create(n: int) -> str:
            answer = client.post("/ap/v1/agent/tasks", json={"input": f"task {n}", "additional_input": {"n": n}})
            assert answer.status_code == 200
            return str(answer.json()["task_id"])

        with ThreadPoolExecutor(200) as pool:
            ids = list(pool.map(create, range(200)))
        listed = client.get("/ap/v1/agent/tasks", params={"page_size": 500}).json()
    assert len(set(ids)) == 200 and {t["task_id"] for t in listed["tasks"]} == set(ids)
    assert p.proxy.observer.exchanges == 201 and p.lines == []
    assert p.statuses()["AP-TASK-002"] is Status.PASSED


def lingering_upstream(linger: float) -> tuple[socket.socket, int]:
    """An SSE upstream that sends its whole stream, [DONE] included, and ends it ``linger`` seconds
    later (a server's generator finishing its work after the last event)."""

    def rest(conn: socket.socket) -> None:
        time.sleep(linger)
        conn.sendall(b"0\r\n\r\n")

    return sse_upstream(_chunked(CHUNK) + _chunked(LAST), rest)


def _closed_at_done(linger: float) -> tuple[int, dict[str, Status]]:
    """A client that reads to [DONE] and closes, as the openai client does; the verdicts after."""
    listener, port = lingering_upstream(linger)
    body = {"model": "sgr_agent", "messages": [{"role": "user", "content": "hi"}], "stream": True}
    with listener, ProxyServer(ProxyConfig("sgr-agent-core", f"http://127.0.0.1:{port}")) as proxy:
        with httpx.stream("POST", proxy.url + "/v1/chat/completions", json=body, timeout=10) as answer:
            received = b""
            for piece in answer.iter_raw():
                received += piece
                if received.endswith(b"data: [DONE]\n\n"):
                    break
        deadline = Deadline(10)  # bounded: the proxy reads on for at most REST_S
        while proxy.observer.committed < 1 and not deadline.passed():
            time.sleep(0.01)
        committed = proxy.observer.committed
        statuses = {r.requirement.id: r.status for r in run_result(proxy.observer).results}
    return committed, statuses


def test_a_stream_its_client_closed_at_done_is_judged_when_the_server_ends_it() -> None:
    committed, statuses = _closed_at_done(0.5)
    assert committed == 1
    for rid in ("SGR-STREAM-001", "SGR-STREAM-002", "SGR-STREAM-004", "SGR-STREAM-006", "SGR-STREAM-007"):
        assert statuses[rid] is Status.PASSED, rid


def test_a_stream_that_goes_on_after_its_client_left_is_not_judged() -> None:
    """The server did not end it within REST_S: what needs its end is not verified (a stream cut
    short is no failure of the server); what its events showed is judged as they came."""
    committed, statuses = _closed_at_done(REST_S + 3)
    assert committed == 1
    assert statuses["SGR-STREAM-006"] is Status.NOT_VERIFIED  # it needs the whole stream
    assert Status.FAILED not in statuses.values()
