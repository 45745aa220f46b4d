"""Resource bounds: every limit of ``mockserver.config.MockLimits`` refuses clearly, in the protocol's
error shape, and the server keeps serving everybody else; streams that lose their client release
their slot and their task; a slow reader holds up nobody.

The mock runs on the test's own event loop here (``serving``), so the tests can look at the
stream gate and at ``asyncio.all_tasks()`` of the loop the handlers run on.
"""

from __future__ import annotations

import asyncio
import json
import socket
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from typing import Any

import aiohttp
import pytest
from aiohttp import web

from mockserver import MockConfig, MockLimits, create_app
from mockserver.app import GATE
from scripts.fuzz_mock import leak_problem, shape_problem
from tests.facts import facts, mocked, stream_of, streamed
from tests.timing import Deadline

ALICE = {"Authorization": "Bearer alice-token"}
SGR_CHAT = "/v1/chat/completions"
NS_CHAT = "/api/v1/hello_world/streaming_chat"


def sgr_body(text: str = "research tidal power") -> dict[str, Any]:
    return {"model": "sgr_agent", "messages": [{"role": "user", "content": text}], "stream": True}


def ns_body(text: str = "hello", **extra: Any) -> dict[str, Any]:
    return {"user_message": {"type": "HUMAN", "text": text}, "chat_filter": {"chat_filter_type": "MAXIMAL"}, **extra}


@asynccontextmanager
async def serving(**settings: Any) -> AsyncIterator[tuple[str, web.Application]]:
    """The mock on this loop, on a free 127.0.0.1 port; stopped on exit."""
    app = create_app(MockConfig(**settings))
    runner = web.AppRunner(app, access_log=None, shutdown_timeout=1.0)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    try:
        yield f"http://127.0.0.1:{port}", app
    finally:
        await runner.cleanup()


def run(test: Callable[[], Awaitable[None]], limit: float = 30.0) -> None:
    asyncio.run(asyncio.wait_for(test(), limit))


async def eventually(condition: Callable[[], bool], what: str, within: float = 3.0) -> None:
    deadline = Deadline(within)
    while not condition():
        assert not deadline.passed(), f"not within {deadline.waited:.1f} s: {what}"
        await asyncio.sleep(0.02)


async def refused(response: aiohttp.ClientResponse, protocol: str, status: int) -> dict[str, Any]:
    """Assert a refusal with ``status`` in ``protocol``'s error shape, leaking nothing."""
    raw = await response.read()
    assert response.status == status, raw[:300]
    problem = shape_problem(protocol, status, response.headers.get("Content-Type", ""), raw)
    assert problem is None, problem
    assert leak_problem(raw, "") is None, raw[:300]
    return dict(json.loads(raw))


async def serves_others(http: aiohttp.ClientSession) -> None:
    """A request of every protocol still answers, on fresh connections."""
    async with aiohttp.ClientSession(http._base_url) as fresh:
        for protocol in mocked():
            call = facts(protocol).served
            async with fresh.request(call.method, call.path, json=call.json, headers=call.headers) as response:
                assert 200 <= response.status < 300, (call.path, await response.text())


# -- body and upload size ------------------------------------------------------------------------


@pytest.mark.parametrize("protocol", mocked())
def test_oversized_json_is_413_in_shape_and_others_are_served(protocol: str) -> None:
    async def test() -> None:
        async with serving(limits=MockLimits(max_json_bytes=2000)) as (url, _), aiohttp.ClientSession(url) as http:
            post = facts(protocol).json_post
            path, headers = post.path, post.headers
            body = json.dumps({"pad": "x" * 5000}).encode()
            for chunked in (False, True):  # announced by Content-Length, or discovered while reading
                data: Any = body
                if chunked:

                    async def chunks() -> AsyncIterator[bytes]:
                        for i in range(0, len(body), 1000):
                            yield body[i : i + 1000]

                    data = chunks()
                async with http.post(path, data=data, headers={**headers, "Content-Type": "application/json"}) as r:
                    assert "2000 bytes" in json.dumps(await refused(r, protocol, 413))
            await serves_others(http)

    run(test)


def test_oversized_upload_is_413_and_claims_no_storage() -> None:
    async def test() -> None:
        limits = MockLimits(max_upload_bytes=4000, max_stored_bytes=10_000)
        async with (
            serving(protocols=("agent-protocol",), limits=limits) as (url, _),
            aiohttp.ClientSession(url) as http,
        ):
            async with http.post("/ap/v1/agent/tasks", json={"input": "upload"}) as r:
                task = (await r.json())["task_id"]
            path = f"/ap/v1/agent/tasks/{task}/artifacts"
            for _ in range(5):  # refused uploads must not eat the 10,000 stored bytes
                form = aiohttp.FormData()
                form.add_field("file", b"y" * 5000, filename="big.bin")
                async with http.post(path, data=form) as r:
                    assert "4000 bytes" in (await refused(r, "agent-protocol", 413))["message"]
            for _ in range(2):
                form = aiohttp.FormData()
                form.add_field("file", b"z" * 3500, filename="fits.bin")
                async with http.post(path, data=form) as r:
                    assert r.status == 200, await r.text()
            async with http.get(path) as r:
                assert (await r.json())["pagination"]["total_items"] == 2

    run(test)


# -- stored objects ------------------------------------------------------------------------------


def test_full_stores_answer_507_in_shape_and_reads_go_on() -> None:
    async def test() -> None:
        limits = MockLimits(max_stored_objects=3)
        async with serving(limits=limits) as (url, _), aiohttp.ClientSession(url) as http:
            # Agent Protocol: three objects (tasks), then 507; reads still work
            for _ in range(3):
                async with http.post("/ap/v1/agent/tasks", json={"input": "x"}) as r:
                    assert r.status == 200
            async with http.post("/ap/v1/agent/tasks", json={"input": "x"}) as r:
                assert "full" in (await refused(r, "agent-protocol", 507))["message"]
            async with http.get("/ap/v1/agent/tasks") as r:
                assert (await r.json())["pagination"]["total_items"] == 3

            # SGR: agents count as objects; deleting one makes room again
            agents = []
            for n in range(3):
                async with http.post(SGR_CHAT, json=sgr_body(f"research topic {n}")) as r:
                    assert r.status == 200
                    await r.read()
                    agents.append(r.headers["X-Agent-ID"])
            async with http.post(SGR_CHAT, json=sgr_body()) as r:
                assert "full" in (await refused(r, "sgr-agent-core", 507))["detail"]
            async with http.delete(f"/agents/{agents[0]}") as r:
                assert r.status == 200
            async with http.post(SGR_CHAT, json=sgr_body()) as r:
                assert r.status == 200
                await r.read()

            # Synapse: sessions and jobs together
            sessions = []
            for _ in range(2):
                async with http.post(
                    "/repo/v1/agent/session", json={"agentAccessLevel": "PUBLICLY_ACCESSIBLE"}, headers=ALICE
                ) as r:
                    assert r.status == 201
                    sessions.append((await r.json())["sessionId"])
            async with http.post(
                "/repo/v1/agent/chat/async/start", headers=ALICE, json={"sessionId": sessions[0], "chatText": "hi"}
            ) as r:
                assert r.status == 201
            for path, body in (
                ("/repo/v1/agent/session", {"agentAccessLevel": "PUBLICLY_ACCESSIBLE"}),
                ("/repo/v1/agent/chat/async/start", {"sessionId": sessions[0], "chatText": "hi"}),
            ):
                async with http.post(path, json=body, headers=ALICE) as r:
                    await refused(r, "synapse-agent", 507)
            async with http.post("/repo/v1/agent/sessions/list", json={}, headers=ALICE) as r:
                assert len((await r.json())["page"]) == 2
            await serves_others(http)

    run(test)


def test_full_artifact_storage_answers_507() -> None:
    async def test() -> None:
        async with (
            serving(protocols=("agent-protocol",), limits=MockLimits(max_stored_bytes=1000)) as (url, _),
            aiohttp.ClientSession(url) as http,
        ):
            async with http.post("/ap/v1/agent/tasks", json={"input": "x"}) as r:
                task = (await r.json())["task_id"]
            form = aiohttp.FormData()
            form.add_field("file", b"a" * 900, filename="a.bin")
            async with http.post(f"/ap/v1/agent/tasks/{task}/artifacts", data=form) as r:
                assert r.status == 200
            form = aiohttp.FormData()
            form.add_field("file", b"b" * 200, filename="b.bin")
            async with http.post(f"/ap/v1/agent/tasks/{task}/artifacts", data=form) as r:
                assert "full" in (await refused(r, "agent-protocol", 507))["message"]

    run(test)


# -- open streams ----------------------------------------------------------------------------------


async def open_stream(
    url: str, path: str, body: Any, receive_buffer: int = 0, headers: Mapping[str, str] | None = None
) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """A raw HTTP/1.1 streaming request whose status line and headers have been read;
    ``receive_buffer`` shrinks the client socket's kernel buffer (a slow reader fills it fast)."""
    host, port = url.removeprefix("http://").split(":")
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    if receive_buffer:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, receive_buffer)
    sock.setblocking(False)
    await asyncio.get_running_loop().sock_connect(sock, (host, int(port)))
    reader, writer = await asyncio.open_connection(sock=sock, limit=1 << 16)
    payload = json.dumps(body).encode()
    extra = "".join(f"{name}: {value}\r\n" for name, value in (headers or {}).items())
    writer.write(
        f"POST {path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n{extra}"
        f"Content-Length: {len(payload)}\r\n\r\n".encode()
        + payload
    )
    await writer.drain()
    head = await reader.readuntil(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200"), head
    return reader, writer


def test_streams_beyond_the_limit_get_503_with_retry_after_and_others_are_served() -> None:
    async def test() -> None:
        async with (
            serving(limits=MockLimits(max_open_streams=2), stream_delay=0.3) as (url, app),
            aiohttp.ClientSession(url) as http,
        ):
            held = [await open_stream(url, SGR_CHAT, sgr_body()), await open_stream(url, NS_CHAT, ns_body())]
            assert app[GATE].open == 2
            for protocol, path, body in (("sgr-agent-core", SGR_CHAT, sgr_body()), ("neuro-san", NS_CHAT, ns_body())):
                async with http.post(path, json=body) as r:
                    error = await refused(r, protocol, 503)
                    assert r.headers["Retry-After"] == "1"
                    assert "limit 2" in json.dumps(error)
            await serves_others(http)  # non-streaming requests are not limited
            for _, writer in held:
                writer.close()
            await eventually(lambda: app[GATE].open == 0, "the closed streams' slots are free")
            async with http.post(NS_CHAT, json=ns_body()) as r:  # room again
                assert r.status == 200 and len((await r.read()).splitlines()) == 5

    run(test)


def handler_tasks() -> set[asyncio.Task[Any]]:
    return {t for t in asyncio.all_tasks() if t is not asyncio.current_task()}


@pytest.mark.parametrize("protocol", streamed())
@pytest.mark.parametrize("stalled", [False, True], ids=["streaming", "stalled"])
def test_a_client_leaving_mid_stream_releases_its_slot_and_task(protocol: str, stalled: bool) -> None:
    """Frames 0.2 s apart, or (the stall faults) no frame for an hour: either way the handler ends
    and gives its slot back soon after the client has gone."""

    async def test() -> None:
        stream = stream_of(protocol)
        faults = (stream.stall_fault,) if stalled else ()
        async with serving(stream_delay=0.2, faults=faults) as (url, app):
            before = handler_tasks()
            reader, writer = await open_stream(url, stream.call.path, stream.call.json, headers=stream.call.headers)
            received = b""  # the frames sent before a stall
            while received.count(stream.first_frame) < stream.before_stall:
                received += await asyncio.wait_for(reader.read(4096), 5)
            if stalled:
                await asyncio.sleep(0.5)  # well inside the stall: nothing more is coming
            assert app[GATE].open == 1 and len(handler_tasks() - before) >= 1
            writer.close()
            await writer.wait_closed()
            await eventually(lambda: app[GATE].open == 0, "the stream slot is released")
            await eventually(lambda: not (handler_tasks() - before), "the handler's task has ended")
            if stream.abandoned is not None:
                await stream.abandoned(url)  # its work was abandoned, not left running

    run(test)


def test_a_slow_reader_blocks_nobody() -> None:
    """One client reads a ~6 MB stream 16 KiB at a time with pauses, so its handler waits on full
    socket buffers (more than the kernel's 4 MB send buffer); meanwhile other clients' requests and
    streams answer promptly."""

    async def test() -> None:
        history = [{"type": t, "text": "lorem ipsum " * 500} for t in ("HUMAN", "AI") * 500]
        context = {
            "chat_histories": [{"origin": [{"tool": "announcer", "instantiation_index": 0}], "messages": history}]
        }
        body = ns_body("slow", chat_context=context)
        async with serving(limits=MockLimits(max_json_bytes=8 << 20)) as (url, app), aiohttp.ClientSession(url) as http:
            reader, writer = await open_stream(url, NS_CHAT, body, receive_buffer=4096)
            await asyncio.sleep(0.3)  # the handler has written what the socket takes and waits
            assert app[GATE].open == 1
            slow_total = 0
            latencies = []
            for n in range(30):
                started = time.monotonic()
                async with http.get("/health") as r:
                    assert r.status == 200
                async with http.post(NS_CHAT, json=ns_body(f"quick {n}")) as r:
                    assert r.status == 200
                    assert f"You said: quick {n}." in (await r.read()).decode()
                latencies.append(time.monotonic() - started)
                slow_total += len(await reader.read(16384))  # the slow client takes a sip
                await asyncio.sleep(0.02)
            assert max(latencies) < 1.0, latencies
            assert app[GATE].open == 1  # the slow stream is still going
            rest = b""
            while chunk := await asyncio.wait_for(reader.read(1 << 16), 10):
                rest += chunk
                if rest.endswith(b"0\r\n\r\n"):
                    break
            assert slow_total + len(rest) > 6_000_000  # everything arrived in the end
            writer.close()
            await eventually(lambda: app[GATE].open == 0, "the slow stream's slot is released")

    run(test)
