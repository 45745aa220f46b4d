"""Streams pass through as they arrive, byte for byte, and many clients at once lose nothing."""

from __future__ import annotations

import socket
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import httpx

from conformance.proxy.forward import ProxyConfig, ProxyServer
from conformance.proxy.report import run_result
from conformance.verdicts.results import Status

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


def held_stream_upstream(release: threading.Event) -> tuple[socket.socket, int]:
    """An SSE upstream that sends its first event, then waits for ``release`` before the rest:
    a proxy that buffered to the end would never deliver that first event."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()

    def serve() -> None:
        conn, _ = listener.accept()
        with conn:
            _read_request(conn)  # all of it: a stream that begins before its request ended is not judged
            conn.sendall(
                b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n"
                b"X-Agent-ID: " + AGENT.encode() + b"\r\nX-Agent-Model: sgr_agent\r\n"
                b"Transfer-Encoding: chunked\r\n\r\n" + _chunked(CHUNK)
            )
            release.wait(20)
            conn.sendall(_chunked(LAST) + b"0\r\n\r\n")

    threading.Thread(target=serve, daemon=True).start()
    return listener, listener.getsockname()[1]


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
        deadline = time.monotonic() + 5  # judged after the bytes went on: wait for the verdict, bounded
        while proxy.observer.committed < 1 and time.monotonic() < deadline:
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
