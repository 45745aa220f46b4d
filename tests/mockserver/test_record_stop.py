"""A recording stopped at any point of an exchange holds every exchange its client was answered,
and only those (``agent-mock --record``, stopped by SIGINT as a developer stops it).

The recorded server is a gated one: each answer waits at named points (before its headers, after
half its body, after all of it, after its end), so the stop falls exactly there, with no timing
guessed. Before the fix, an answer with a Content-Length was recorded only once the recorder read
the upstream's end, after the client already had it: a stop right after the client returned lost
it (1 run in 6 by hand)."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from aiohttp import web

from specs.serving import AppServer

REPO = Path(__file__).resolve().parents[2]
BODY = json.dumps({"task_id": "t-1", "input": "x" * 2000, "artifacts": []}).encode()
EVENTS = [{"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m", "choices": []}] * 3
POINTS = ("received", "headers", "half", "whole", "ended")
"""Where the gated server's answer waits: the request read; the headers sent; half the body sent;
all of it sent (for a Content-Length, the whole answer; chunked, its end not yet); the answer ended."""


class _Gated(AppServer):
    """Answers the Agent Protocol create (JSON, by Content-Length or chunked) and the SGR stream,
    pausing at ``stop_at`` until the test is done with it."""

    name = "gated server"

    def __init__(self, stop_at: str, framing: str) -> None:
        super().__init__()
        self.stop_at = stop_at
        self.framing = framing
        self.reached = threading.Event()

    async def _point(self, name: str) -> None:
        if name == self.stop_at:
            self.reached.set()
            await asyncio.Event().wait()  # held until the connection goes

    def make_app(self) -> web.Application:
        async def create(request: web.Request) -> web.StreamResponse:
            await request.read()
            await self._point("received")
            response = web.StreamResponse(status=201, headers={"Content-Type": "application/json"})
            if self.framing == "length":
                response.content_length = len(BODY)
            await response.prepare(request)
            await self._point("headers")
            await response.write(BODY[: len(BODY) // 2])
            await self._point("half")
            await response.write(BODY[len(BODY) // 2 :])
            await self._point("whole")
            await response.write_eof()
            await self._point("ended")
            return response

        async def chat(request: web.Request) -> web.StreamResponse:
            await request.read()
            await self._point("received")
            response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
            await response.prepare(request)
            await self._point("headers")
            for n, event in enumerate(EVENTS):
                await response.write(f"data: {json.dumps(event)}\n\n".encode())
                if n == 0:
                    await self._point("half")
            await response.write(b"data: [DONE]\n\n")
            await self._point("whole")
            await response.write_eof()
            await self._point("ended")
            return response

        app = web.Application()
        app.router.add_post("/ap/v1/agent/tasks", create)
        app.router.add_post("/v1/chat/completions", chat)
        return app


@dataclass
class _Client:
    """A request in a thread: what it was answered, whole or not."""

    url: str
    stream: bool
    whole: bool = False
    body: bytes = b""
    events: list[Any] = field(default_factory=list)
    done: threading.Event = field(default_factory=threading.Event)

    def run(self) -> None:
        try:
            with httpx.Client(timeout=30) as c:
                if self.stream:
                    chat = {"model": "sgr_agent", "stream": True, "messages": [{"role": "user", "content": "owls"}]}
                    with c.stream("POST", self.url + "/v1/chat/completions", json=chat) as r:
                        for line in r.iter_lines():
                            if line.startswith("data: ") and line != "data: [DONE]":
                                self.events.append(json.loads(line[6:]))
                    self.whole = True
                else:
                    r = c.post(self.url + "/ap/v1/agent/tasks", json={"input": "x"})
                    self.body, self.whole = r.content, True
        except httpx.HTTPError:
            pass  # cut off by the stop: not answered
        finally:
            self.done.set()


def _recorder(upstream: str, target: Path, protocol: str) -> tuple[subprocess.Popen[str], str]:
    command = [sys.executable, "-m", "mockserver", "--port", "0", "--protocol", protocol]
    proc = subprocess.Popen(
        [*command, "--record", upstream, "--record-to", str(target)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert proc.stdout is not None
    url = proc.stdout.readline().split()[3]
    assert proc.stdout.readline().startswith("recording ")
    return proc, url


CASES = [
    *(("agent-protocol", "length", point) for point in POINTS),
    ("agent-protocol", "chunked", "whole"),
    ("agent-protocol", "chunked", "ended"),
    *(("sgr-agent-core", "stream", point) for point in ("headers", "half", "whole", "ended")),
]


@pytest.mark.slow  # a recorder process per case, and its stop waits out the exchange under way
@pytest.mark.parametrize(("protocol", "framing", "point"), CASES, ids=["-".join(c[1:]) for c in CASES])
def test_a_stop_at_any_point_keeps_every_answered_exchange(
    tmp_path: Path, protocol: str, framing: str, point: str
) -> None:
    target = tmp_path / "recorded.yaml"
    with _Gated(point, framing) as upstream:
        proc, url = _recorder(upstream.url, target, protocol)
        try:
            client = _Client(url, stream=framing == "stream")
            thread = threading.Thread(target=client.run, daemon=True)
            thread.start()
            assert upstream.reached.wait(30), f"the server never reached {point!r}"
            if framing == "length" and point in ("whole", "ended"):
                assert client.done.wait(30) and client.whole  # the client has its answer: stop now
            elif framing == "stream" and point == "half":
                deadline = threading.Event()
                for _ in range(300):  # the client has read the first event (bounded: 30 s)
                    if client.events:
                        break
                    deadline.wait(0.1)
            proc.send_signal(signal.SIGINT)
            out, err = proc.communicate(timeout=60)
            thread.join(30)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    assert proc.returncode == 0, err
    assert not thread.is_alive()
    stubs = yaml.safe_load(target.read_text(encoding="utf-8"))["stubs"]
    assert f"wrote {len(stubs)} recorded exchange(s)" in out
    if client.whole:  # answered before the stop: on disk after it, whole
        [stub] = stubs
        response = stub["response"]
        if framing == "stream":
            assert response["stream"]["frames"] and [f["data"] for f in response["stream"]["frames"]] == client.events
            assert "stall" not in response["stream"]
        else:
            assert (
                response["status"] == 201
                and json.dumps(response["body"]).encode() == json.dumps(json.loads(client.body)).encode()
            )
    elif framing == "stream" and client.events:  # a stream cut by the stop: what came, then a stall
        [stub] = stubs
        stream = stub["response"]["stream"]
        assert stream["stall"] is True
        assert [f["data"] for f in stream["frames"]][: len(client.events)] == client.events
    else:  # not answered: nothing a replay would serve as an answer
        assert stubs == []


def test_a_stop_before_any_exchange_writes_an_empty_recording(tmp_path: Path) -> None:
    target = tmp_path / "recorded.yaml"
    with _Gated("ended", "length") as upstream:
        proc, _ = _recorder(upstream.url, target, "agent-protocol")
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert yaml.safe_load(target.read_text(encoding="utf-8")) == {"stubs": []}
    assert not target.with_name(target.name + ".part").exists()
