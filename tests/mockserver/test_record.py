"""Record (mockserver/record.py): the mock in front of a server, writing what it saw as stubs that
another mock then serves, answer for answer; credentials never written. The server recorded here
is another mock (tests/interop records the real Agent Protocol SDK and sgr-agent-core servers)."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from aiohttp import web

from mockserver import EmbeddedServer, MockConfig, create_app
from mockserver.record import _kept
from specs.serving import AppServer
from tests.timing import Deadline

REPO = Path(__file__).resolve().parents[2]
ALICE = {"Authorization": "Bearer alice-token"}
SECRET = "s3cret-query-value"


def calls(c: httpx.Client) -> list[Any]:
    """A client's session over all four protocols: writes, reads, streams, errors, bytes."""
    out: list[Any] = []
    task = c.post("/ap/v1/agent/tasks", json={"input": "write hello"}).json()
    out.append(task)
    steps = [c.post(f"/ap/v1/agent/tasks/{task['task_id']}/steps", json={}).json() for _ in range(5)]
    out += steps
    artifact = steps[3]["artifacts"][0]["artifact_id"]
    download = c.get(f"/ap/v1/agent/tasks/{task['task_id']}/artifacts/{artifact}")
    out.append((download.status_code, download.headers["Content-Type"], download.content))
    out.append(c.get(f"/ap/v1/agent/tasks?page_size=2&api_key={SECRET}").json())
    out.append(c.post("/ap/v1/agent/tasks", json={"input": 5}).json())  # refused by the server recorded
    with c.stream(
        "POST",
        "/v1/chat/completions",
        json={"model": "sgr_agent", "stream": True, "messages": [{"role": "user", "content": "owls"}]},
    ) as r:
        out.append((r.headers["X-Agent-ID"], r.read().decode()))
    out.append(c.get(f"/agents/{r.headers['X-Agent-ID']}/state").json())
    chat = c.post("/api/v1/math_guy/streaming_chat", json={"user_message": {"text": "6 * 7"}})
    out.append((chat.headers["Content-Type"], chat.text))
    session = c.post("/repo/v1/agent/session", json={"agentAccessLevel": "PUBLICLY_ACCESSIBLE"}, headers=ALICE)
    out.append(session.json())
    out.append(c.get(f"/repo/v1/agent/session/{session.json()['sessionId']}", headers=ALICE).json())
    out.append(c.get("/repo/v1/userProfile", headers={"Authorization": "Bearer nobody"}).json())
    return out


@pytest.fixture(scope="module")
def recorded() -> Iterator[tuple[list[Any], dict[str, Any]]]:
    with (
        EmbeddedServer(MockConfig(stream_delay=0.05)) as real,
        EmbeddedServer(MockConfig(record=real.url)) as recorder,
        httpx.Client(base_url=recorder.url, timeout=10) as c,
    ):
        seen = calls(c)
        document = c.get("/__mock/recording").json()
    yield seen, document


def test_the_recording_is_served_answer_for_answer(recorded: tuple[list[Any], dict[str, Any]]) -> None:
    seen, document = recorded
    with EmbeddedServer(MockConfig(stubs=document)) as replay, httpx.Client(base_url=replay.url, timeout=10) as c:
        again = calls(c)
    assert len(again) == len(seen)
    for number, (first, second) in enumerate(zip(seen, again, strict=True)):
        assert first == second, number  # ids, timestamps, streams, bytes and refusals alike


def test_each_exchange_is_one_stub_in_order(recorded: tuple[list[Any], dict[str, Any]]) -> None:
    _, document = recorded
    stubs = document["stubs"]
    assert [s["request"]["operation"] for s in stubs[:3]] == ["createAgentTask", *["executeAgentTaskStep"] * 2]
    assert all(s["before_validation"] for s in stubs)
    steps = [s for s in stubs if s["request"]["operation"] == "executeAgentTaskStep"]
    assert [s.get("times") for s in steps] == [1, 1, 1, 1, None]  # the last answer repeats
    stream = next(s for s in stubs if s["request"]["operation"] == "createChatCompletion")["response"]
    assert stream["stream"]["format"] == "sse" and stream["stream"]["done"] is True
    assert stream["headers"]["X-Agent-ID"].startswith("sgr_agent_")
    delays = [f["delay"] for f in stream["stream"]["frames"]]
    assert sum(delays) >= 0.05 * (len(delays) - 1) * 0.9  # the frames' pacing is kept (a lower bound)
    ndjson = next(s for s in stubs if s["request"]["operation"] == "AgentService_StreamingChat")["response"]
    assert ndjson["stream"]["format"] == "ndjson"
    download = next(s for s in stubs if s["request"]["operation"] == "downloadAgentTaskArtifact")["response"]
    assert "body_base64" in download and "Content-Disposition" in download["headers"]


def test_no_credential_is_written(recorded: tuple[list[Any], dict[str, Any]]) -> None:
    _, document = recorded
    text = json.dumps(document)
    assert "alice-token" not in text and "nobody" not in text and SECRET not in text
    listing = next(s for s in document["stubs"] if s["request"]["operation"] == "listAgentTasks")
    assert listing["request"]["query"] == {"page_size": "2"}
    assert _kept({"Set-Cookie": "sid=1", "X-Api-Key": "k", "X-Agent-ID": "a", "WWW-Authenticate": "Bearer"}) == {
        "X-Agent-ID": "a",
        "WWW-Authenticate": "Bearer",
    }


def test_an_answer_off_the_document_is_kept_and_marked() -> None:
    with (
        EmbeddedServer(MockConfig(protocols=("agent-protocol",), faults=("ap-task-missing-id",))) as real,
        EmbeddedServer(MockConfig(protocols=("agent-protocol",), record=real.url)) as recorder,
        httpx.Client(base_url=recorder.url) as c,
    ):
        broken = c.post("/ap/v1/agent/tasks", json={"input": "x"}).json()
        document = c.get("/__mock/recording").json()
    [stub] = document["stubs"]
    assert stub["response"]["invalid"] is True
    assert 'off the document: recorded-00001.response.body: "task_id" is a required property' in stub["description"]
    with EmbeddedServer(MockConfig(protocols=("agent-protocol",), stubs=document)) as replay:
        assert httpx.post(replay.url + "/ap/v1/agent/tasks", json={"input": "x"}).json() == broken


def test_a_server_that_does_not_answer_is_a_502_in_the_protocols_shape() -> None:
    with (
        EmbeddedServer(MockConfig(protocols=("agent-protocol",), record="http://127.0.0.1:9")) as recorder,
        httpx.Client(base_url=recorder.url) as c,
    ):
        answer = c.get("/ap/v1/agent/tasks")
        assert answer.status_code == 502 and "did not answer" in answer.json()["message"]
        assert c.get("/__mock/recording").json() == {"stubs": []}


def test_recording_takes_no_faults_fixtures_or_stubs() -> None:
    with pytest.raises(ValueError, match="no faults, fixtures or stubs"):
        create_app(MockConfig(record="http://127.0.0.1:9", faults=("ap-task-missing-id",)))


def _cli(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "mockserver", "--port", "0", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )


def _stop(proc: subprocess.Popen[str], signum: int = signal.SIGTERM) -> tuple[str, str]:
    proc.send_signal(signum)
    out, err = proc.communicate(timeout=30)
    return out, err


def test_the_cli_writes_the_recording_when_it_stops(tmp_path: Path) -> None:
    target = tmp_path / "recorded.yaml"
    with EmbeddedServer(MockConfig(protocols=("agent-protocol",))) as real:
        proc = _cli("--protocol", "agent-protocol", "--record", real.url, "--record-to", str(target))
        watchdog: Callable[[], None] = proc.kill
        timer = threading.Timer(60, watchdog)
        timer.start()
        try:
            assert proc.stdout is not None
            url = proc.stdout.readline().split()[3]
            assert proc.stdout.readline().startswith(f"recording {real.url} to {target}")
            created = httpx.post(url + "/ap/v1/agent/tasks", json={"input": "kept"}).json()
            out, err = _stop(proc)
        finally:
            timer.cancel()
            if proc.poll() is None:
                proc.kill()
    assert proc.returncode == 0, err
    assert f"wrote 1 recorded exchange(s) to {target}" in out
    document = yaml.safe_load(target.read_text(encoding="utf-8"))
    assert document["stubs"][0]["response"]["body"] == created
    done = subprocess.run(
        [sys.executable, "-m", "mockserver", "--record", real.url, "--stubs", str(target)],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        check=False,
    )
    assert done.returncode == 2 and "no --fault, --fixtures or --stubs" in done.stderr


def test_a_stream_that_never_ends_is_replayed_as_one() -> None:
    """The client gave up on a stream the server never ended: the stub sends what came, then stalls."""
    chat = {"user_message": {"text": "6 * 7"}}
    with (
        EmbeddedServer(MockConfig(protocols=("neuro-san",), faults=("ns-stream-stall",))) as real,
        EmbeddedServer(MockConfig(protocols=("neuro-san",), record=real.url)) as recorder,
        httpx.Client(base_url=recorder.url, timeout=1.0) as c,
    ):
        with pytest.raises(httpx.ReadTimeout), c.stream("POST", "/api/v1/math_guy/streaming_chat", json=chat) as r:
            lines = r.iter_lines()
            first = next(lines)
            next(lines)
        deadline = Deadline(10)  # the recorder notices the client left within its poll
        while not (document := httpx.get(recorder.url + "/__mock/recording", timeout=30).json())["stubs"]:
            assert not deadline.passed(), "the stalled exchange was never recorded"
            time.sleep(0.1)
    [stub] = document["stubs"]
    assert stub["response"]["stream"]["stall"] is True and len(stub["response"]["stream"]["frames"]) == 1
    with (
        EmbeddedServer(MockConfig(protocols=("neuro-san",), stubs=document)) as replay,
        httpx.Client(base_url=replay.url, timeout=1.0) as c,
        pytest.raises(httpx.ReadTimeout),
        c.stream("POST", "/api/v1/math_guy/streaming_chat", json=chat) as r,
    ):
        lines = r.iter_lines()
        assert next(lines) == first
        next(lines)


def test_bodies_that_are_not_json_or_carry_a_credential_match_by_order() -> None:
    with (
        EmbeddedServer(MockConfig(protocols=("agent-protocol",))) as real,
        EmbeddedServer(MockConfig(protocols=("agent-protocol",), record=real.url)) as recorder,
        httpx.Client(base_url=recorder.url) as c,
    ):
        c.post("/ap/v1/agent/tasks", content=b"{not json", headers={"Content-Type": "application/json"})
        c.post("/ap/v1/agent/tasks", json={"input": "x", "additional_input": {"password": "hunter2"}})
        document = c.get("/__mock/recording").json()
    malformed, secret = document["stubs"]
    assert malformed["request"]["body"] == [{"pointer": "", "present": False}]
    assert "body" not in secret["request"] and secret["times"] == 1  # order alone, and never repeated
    assert "hunter2" not in json.dumps(document["stubs"][1]["request"])


def test_an_empty_answer_keeps_its_content_type() -> None:
    """An empty download is replayed as the type the server gave it (a stub's JSON default was
    sent instead: the suite judged the replay's empty file application/json)."""
    with (
        EmbeddedServer(MockConfig(protocols=("agent-protocol",))) as real,
        EmbeddedServer(MockConfig(protocols=("agent-protocol",), record=real.url)) as recorder,
        httpx.Client(base_url=recorder.url, timeout=10) as c,
    ):
        task = c.post("/ap/v1/agent/tasks", json={"input": "x"}).json()["task_id"]
        files = {"file": ("empty.txt", b"", "application/octet-stream")}
        artifact = c.post(f"/ap/v1/agent/tasks/{task}/artifacts", files=files).json()["artifact_id"]
        real_answer = c.get(f"/ap/v1/agent/tasks/{task}/artifacts/{artifact}")
        document = c.get("/__mock/recording").json()
    assert real_answer.content == b"" and real_answer.headers["Content-Type"] == "application/octet-stream"
    with EmbeddedServer(MockConfig(protocols=("agent-protocol",), stubs=document)) as replay:
        again = httpx.get(f"{replay.url}/ap/v1/agent/tasks/{task}/artifacts/{artifact}", timeout=10)
    assert (again.status_code, again.content) == (200, b"")
    assert again.headers["Content-Type"] == real_answer.headers["Content-Type"]


class _Lingering(AppServer):
    """An SGR server whose stream ends ``linger`` seconds after its ``[DONE]`` (as a server's
    generator finishing its work after the last event does)."""

    name = "lingering SGR server"

    def __init__(self, linger: float) -> None:
        super().__init__()
        self.linger = linger

    def make_app(self) -> web.Application:
        async def chat(request: web.Request) -> web.StreamResponse:
            await request.read()
            response = web.StreamResponse(headers={"Content-Type": "text/event-stream", "X-Agent-ID": "sgr_agent_1"})
            await response.prepare(request)
            chunk = {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "sgr_agent", "choices": []}
            await response.write(f"data: {json.dumps(chunk)}\n\ndata: [DONE]\n\n".encode())
            await asyncio.sleep(self.linger)
            await response.write_eof()
            return response

        app = web.Application()
        app.router.add_post("/v1/chat/completions", chat)
        return app


@pytest.mark.parametrize("linger", [0.2, 1.0], ids=["before-the-recorder-looks", "after-the-client-left"])
def test_a_stream_the_client_closed_at_its_done_is_recorded_whole(linger: float) -> None:
    """The client read to ``[DONE]`` and closed; the server ended its stream a moment later. The
    recording is the server's whole answer (it was dropped: the end could not be written to the
    client), not a stall."""
    chat = {"model": "sgr_agent", "stream": True, "messages": [{"role": "user", "content": "owls"}]}
    with (
        _Lingering(linger) as real,
        EmbeddedServer(MockConfig(protocols=("sgr-agent-core",), record=real.url)) as recorder,
        httpx.Client(base_url=recorder.url, timeout=10) as c,
    ):
        with c.stream("POST", "/v1/chat/completions", json=chat) as r:
            lines = r.iter_lines()
            while next(lines) != "data: [DONE]":
                pass
        deadline = Deadline(10)
        while not (document := c.get("/__mock/recording").json())["stubs"]:
            assert not deadline.passed(), "the exchange was never recorded"
            time.sleep(0.1)
    [stub] = document["stubs"]
    stream = stub["response"]["stream"]
    assert stream["format"] == "sse" and stream["done"] is True and "stall" not in stream
    assert len(stream["frames"]) == 1
