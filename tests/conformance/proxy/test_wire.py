"""The forwarding path's HTTP/1.1 (conformance/proxy/wire.py), against upstreams scripted byte by byte:
connection reuse, framing both ways, early answers, pipelining, bounds, and judging after the bytes."""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import httpx
import pytest

from conformance.check.http import tls_context
from conformance.proxy.forward import ProxyConfig, ProxyServer
from conformance.verdicts.results import Status
from tests.timing import Clock, Deadline

from .conftest import proxied

Script = Callable[[socket.socket, int], None]
TASK = b'{"task_id":"t1","input":"x","additional_input":{},"artifacts":[]}'


class Upstream:
    """A loopback server that runs ``script(conn, n)`` on its n-th connection, in a thread."""

    def __init__(self, script: Script) -> None:
        self.script = script
        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen()
        self.listener.settimeout(0.2)
        self.received: list[bytes] = []
        self.stop = threading.Event()
        self.served: list[tuple[socket.socket, threading.Thread]] = []
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    @property
    def connections(self) -> int:
        return len(self.served)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.listener.getsockname()[1]}"

    def _accept(self) -> None:
        while not self.stop.is_set():
            try:
                conn, _ = self.listener.accept()
            except TimeoutError:
                continue
            thread = threading.Thread(target=self._run, args=(conn, self.connections + 1), daemon=True)
            self.served.append((conn, thread))
            thread.start()

    def _run(self, conn: socket.socket, n: int) -> None:
        conn.settimeout(10)
        with conn, contextlib.suppress(OSError):
            self.script(conn, n)

    def close(self, strict: bool = True) -> None:
        """Stops accepting, cuts every connection and waits for its script to end: a script left
        running would outlive the test in its worker (one spun a core there for the rest of a run).
        ``strict``: fail if one still runs (not while the test's own failure is on its way out)."""
        self.stop.set()
        self.thread.join(5)
        self.listener.close()
        for conn, _ in self.served:
            with contextlib.suppress(OSError):  # closed by its script already
                conn.shutdown(socket.SHUT_RDWR)
        for _, thread in self.served:
            thread.join(5)
        still = sum(thread.is_alive() for _, thread in self.served)
        assert not (strict and still), f"{still} connection scripts still run after their connection was cut"


def received(conn: socket.socket) -> bytes:
    """What ``conn`` has to read next; OSError once the peer closed it. A bare ``recv`` answers
    b"" at once, for ever, on a closed connection: a loop on it spun a core for the rest of the
    test process (every later test's ``cpu_s`` swelled by the wall time it took)."""
    data = conn.recv(65536)
    if not data:
        raise OSError("closed")
    return data


def read_request(conn: socket.socket, seen: list[bytes], buffered: bytearray) -> bytes:
    """One request (head and body, Content-Length or chunked) from ``conn``, ``buffered`` carrying
    what follows. A chunked body is read to its last chunk before the script answers, as a server
    that reads before it answers does (answering after the head raced the proxy's body bound)."""
    while b"\r\n\r\n" not in buffered:
        buffered += received(conn)
    head, _, rest = bytes(buffered).partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value)
        elif name.strip().lower() == b"transfer-encoding" and b"chunked" in value.lower():
            while not (rest.startswith(b"0\r\n\r\n") or b"\r\n0\r\n\r\n" in rest):  # the last chunk
                rest += received(conn)
            length = 5 if rest.startswith(b"0\r\n\r\n") else rest.index(b"\r\n0\r\n\r\n") + 7
    while len(rest) < length:
        rest += received(conn)
    buffered[:] = rest[length:]
    request = head + b"\r\n\r\n" + rest[:length]
    seen.append(request)
    return request


def answer(body: bytes, status: str = "200 OK", extra: bytes = b"") -> bytes:
    return (
        f"HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n".encode()
        + extra
        + b"\r\n"
        + body
    )


@contextmanager
def through(
    script: Script, protocol: str = "agent-protocol", **config: object
) -> Iterator[tuple[ProxyServer, Upstream]]:
    upstream = Upstream(script)
    lines: list[str] = []
    try:
        settings = {"timeout": 5.0, "console": lines.append, **config}
        with ProxyServer(ProxyConfig(protocol, upstream.url, **settings)) as proxy:  # type: ignore[arg-type]
            yield proxy, upstream
    except BaseException:
        upstream.close(strict=False)
        raise
    upstream.close()


def keep_alive_server(body: bytes = TASK) -> Script:
    def script(conn: socket.socket, n: int) -> None:
        buffered = bytearray()
        while True:
            read_request(conn, [], buffered)
            conn.sendall(answer(body))

    return script


def test_one_upstream_connection_carries_many_clients_requests() -> None:
    with through(keep_alive_server()) as (proxy, upstream):
        for _ in range(20):
            # a new client connection each time
            with httpx.Client(base_url=proxy.url, timeout=5, verify=tls_context()) as client:
                assert client.get("/ap/v1/agent/tasks/t1").status_code == 200
    assert upstream.connections == 1


def test_a_chunked_answer_is_passed_on_chunked_and_whole() -> None:
    parts = [b'{"task_id":"t1",', b'"input":"x","additional_input":{},', b'"artifacts":[]}']

    def script(conn: socket.socket, n: int) -> None:
        buffered = bytearray()
        read_request(conn, [], buffered)
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n")
        for part in parts:
            conn.sendall(b"%x\r\n%s\r\n" % (len(part), part))
            time.sleep(0.02)
        conn.sendall(b"0\r\n\r\n")
        read_request(conn, [], buffered)  # still usable: a second request on the same connection
        conn.sendall(answer(TASK))

    with through(script) as (proxy, upstream), httpx.Client(base_url=proxy.url, timeout=5) as client:
        first = client.get("/ap/v1/agent/tasks/t1")
        assert first.headers["transfer-encoding"] == "chunked" and first.content == b"".join(parts)
        assert client.get("/ap/v1/agent/tasks/t1").content == TASK
    assert upstream.connections == 1
    assert proxy.observer.tallies["AP-SCHEMA-005"].exercised == 2


def test_a_body_delimited_by_the_connections_end_reaches_the_client() -> None:
    def script(conn: socket.socket, n: int) -> None:
        read_request(conn, [], bytearray())
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n" + TASK)
        conn.shutdown(socket.SHUT_WR)

    with through(script) as (proxy, _):
        got = httpx.get(proxy.url + "/ap/v1/agent/tasks/t1", timeout=5)
    assert got.status_code == 200 and got.content == TASK and got.headers["connection"] == "close"
    assert proxy.observer.tallies["AP-SCHEMA-005"].broken == 0


def test_chunked_requests_and_head_requests_pass() -> None:
    seen: list[bytes] = []

    def script(conn: socket.socket, n: int) -> None:
        buffered = bytearray()
        while True:
            while b"\r\n\r\n" not in buffered:
                buffered += received(conn)
            head, _, rest = bytes(buffered).partition(b"\r\n\r\n")
            buffered[:] = rest
            if b"chunked" in head.lower():
                while b"0\r\n\r\n" not in buffered:
                    buffered += received(conn)
                body, _, rest = bytes(buffered).partition(b"0\r\n\r\n")
                buffered[:] = rest
                seen.append(head + b"\r\n\r\n" + body)
            else:
                seen.append(head)
            conn.sendall(answer(TASK))

    def chunks() -> Iterator[bytes]:
        yield b'{"input": '
        yield b'"x"}'

    def head_script(conn: socket.socket, n: int) -> None:
        buffered = bytearray()
        while True:
            request = read_request(conn, seen, buffered)
            if request.startswith(b"HEAD"):
                conn.sendall(answer(TASK)[: -len(TASK)])  # the head alone, Content-Length announced
            else:
                conn.sendall(answer(TASK))

    with through(head_script) as (proxy, upstream), httpx.Client(base_url=proxy.url, timeout=5) as client:
        assert client.head("/ap/v1/agent/tasks/t1").status_code == 200
        assert client.get("/ap/v1/agent/tasks/t1").content == TASK  # the HEAD left the connection usable
    assert upstream.connections == 1
    with through(script) as (proxy, _):
        sent = httpx.post(
            proxy.url + "/ap/v1/agent/tasks", content=chunks(), headers={"Content-Type": "application/json"}, timeout=5
        )
        assert sent.status_code == 200
    assert seen[-1].endswith(b'a\r\n{"input": \r\n4\r\n"x"}\r\n')  # re-framed as it came
    assert proxy.observer.tallies["AP-CLIENT-001"].broken == 0  # judged on the whole body


def test_an_answer_before_the_request_ended_is_judged_with_the_whole_request() -> None:
    """A server may refuse (401, 413) as soon as it read the head; the client still sends its body,
    and the request is judged on all of it, not on the part sent before the answer."""

    def script(conn: socket.socket, n: int) -> None:
        buffered = bytearray()
        while b"\r\n\r\n" not in buffered:
            buffered += received(conn)
        conn.sendall(answer(b'{"message": "no"}', "401 Unauthorized"))
        time.sleep(0.5)

    with through(script) as (proxy, _):
        host, port = proxy.url.removeprefix("http://").split(":")
        with socket.create_connection((host, int(port)), timeout=5) as sock:
            sock.sendall(
                b"POST /ap/v1/agent/tasks HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                b'Transfer-Encoding: chunked\r\n\r\na\r\n{"input": \r\n'
            )
            assert sock.recv(65536).startswith(b"HTTP/1.1 401 ")  # answered mid-request
            sock.sendall(b'4\r\n"x"}\r\n0\r\n\r\n')
            deadline = Deadline(5)
            while proxy.observer.tallies["AP-CLIENT-001"].exercised == 0 and not deadline.passed():
                time.sleep(0.05)
    tally = proxy.observer.tallies["AP-CLIENT-001"]
    assert tally.exercised == 1 and tally.broken == 0, tally.first_reason


def test_pipelined_requests_are_answered_in_order() -> None:
    with through(keep_alive_server()) as (proxy, _):
        host, port = proxy.url.removeprefix("http://").split(":")
        with socket.create_connection((host, int(port)), timeout=5) as sock:
            request = b"GET /ap/v1/agent/tasks/t%d HTTP/1.1\r\nHost: x\r\n\r\n"
            sock.sendall(request % 1 + request % 2 + request % 3)
            got = b""
            while got.count(TASK) < 3:
                data = sock.recv(65536)
                assert data, got
                got += data
    assert got.count(b"HTTP/1.1 200 OK") == 3


def test_an_upstream_that_dies_mid_answer_cuts_the_client_and_is_judged() -> None:
    def script(conn: socket.socket, n: int) -> None:
        read_request(conn, [], bytearray())
        conn.sendall(answer(TASK)[:-10])

    with through(script) as (proxy, _):
        with pytest.raises(httpx.RemoteProtocolError):
            httpx.get(proxy.url + "/ap/v1/agent/tasks/t1", timeout=5)
        time.sleep(0.2)
    assert proxy.observer.tallies["AP-SCHEMA-005"].broken == 0  # a cut answer is not judged as a body
    assert proxy.observer.exchanges == 1


def test_a_silent_body_is_cut_at_the_timeout() -> None:
    def script(conn: socket.socket, n: int) -> None:
        read_request(conn, [], bytearray())
        conn.sendall(answer(TASK)[:-10])
        time.sleep(3)

    with through(script, timeout=0.5) as (proxy, _):
        clock = Clock()
        with pytest.raises(httpx.RemoteProtocolError):
            httpx.get(proxy.url + "/ap/v1/agent/tasks/t1", timeout=5)
        clock.assert_within(2, "the cut", plus=0.5, cap=3)  # the silent upstream holds it 3 s


def test_a_stale_pooled_connection_is_replaced_for_an_idempotent_request() -> None:
    def script(conn: socket.socket, n: int) -> None:
        buffered = bytearray()
        read_request(conn, [], buffered)
        conn.sendall(answer(TASK))
        if n == 1:
            read_request(conn, [], buffered)  # the next request arrives, and the server just closes
            return
        while True:
            read_request(conn, [], buffered)
            conn.sendall(answer(TASK))

    with through(script) as (proxy, upstream), httpx.Client(base_url=proxy.url, timeout=5) as client:
        assert client.get("/ap/v1/agent/tasks/t1").status_code == 200
        assert client.get("/ap/v1/agent/tasks/t1").status_code == 200  # retried on a fresh connection
    assert upstream.connections == 2


def test_oversized_heads_and_bodies_are_refused_in_the_protocols_shape() -> None:
    with through(keep_alive_server(), max_request_bytes=1000) as (proxy, _):
        big_head = httpx.get(proxy.url + "/ap/v1/agent/tasks", headers={"X-Big": "a" * (70 << 10)}, timeout=5)
        assert big_head.status_code == 431 and "message" in big_head.json()

        def body() -> Iterator[bytes]:
            for _ in range(10):
                yield b" " * 200

        chunked = httpx.post(proxy.url + "/ap/v1/agent/tasks", content=body(), timeout=5)
        assert chunked.status_code == 413 and "exceeds the proxy's 1000 bytes" in chunked.json()["message"]


def test_the_bytes_never_wait_for_the_verdict() -> None:
    """Judging is held up until the client says it has the whole answer: a proxy that judged
    before it forwarded would deadlock here (and the client time out)."""
    received = threading.Event()
    with proxied("agent-protocol") as p:
        observer = p.proxy.observer
        whole = observer.whole

        def judged_after_the_client_has_it(flight: object) -> dict[str, str]:
            assert received.wait(5), "the client did not get the answer before it was judged"
            return whole(flight)  # type: ignore[arg-type]

        observer.whole = judged_after_the_client_has_it  # type: ignore[method-assign]
        answer = httpx.post(p.url + "/ap/v1/agent/tasks", json={"input": "x"}, timeout=4)
        received.set()
        assert answer.status_code == 200
    assert p.statuses()["AP-SCHEMA-005"] is Status.PASSED


def test_only_the_head_counts_against_the_head_bound() -> None:
    from conformance.proxy.wire import head_share

    assert head_share(b"", b"POST / HTTP/1.1\r\nA: b\r\n\r\n" + b"x" * 100) == 25
    assert head_share(b"", b"POST / HTTP/1.1\r\nA: b\r\n") == 23  # the head goes on
    assert head_share(b"b\r\n", b"\r\nbody") == 2  # the blank line split across two reads
    assert head_share(b"\r\n\r", b"\nbody") == 1


def test_a_body_past_the_head_bound_in_one_read_is_forwarded() -> None:
    """The edge corpus's 64 Ki character text, sent with its head in one write, was answered 431."""
    from conformance.proxy.wire import MAX_HEAD_BYTES

    text = "\u00e9" * MAX_HEAD_BYTES
    with proxied("agent-protocol") as p, httpx.Client(base_url=p.base, timeout=10) as client:
        answer = client.post("/ap/v1/agent/tasks", json={"input": text})
    assert answer.status_code == 200 and answer.json()["input"] == text
