"""``--example-db`` against a real Redis server (Debian's redis-server, installed by .ci/run, started
here on a loopback port and stopped by its PID): a failure the first run finds is replayed first by
the second, a read-only run writes nothing, and a changed document replays nothing."""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conformance.engine.runner import run
from conformance.run.exampledb import ExampleDb, namespace, open_database
from conformance.run.options import RunOptions
from conformance.run.targets import embedded
from conformance.verdicts.results import RunResult, Status
from specs.documents import Spec, load
from tests.timing import Deadline

redis = pytest.importorskip("redis", reason="the redis extra (pip install '.[redis]')")
SERVER = shutil.which("redis-server")
pytestmark = pytest.mark.skipif(SERVER is None, reason="redis-server is not installed (.ci/run installs it)")

FAULT, PROTOCOL, BROKEN = "ns-history-newest-first", "neuro-san", "NS-MODEL-003"
"""A model-based fault the first run meets only after a sequence or more of chatting."""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def redis_url(tmp_path: Path) -> Iterator[str]:
    assert SERVER is not None
    port = free_port()
    server = subprocess.Popen(
        [
            SERVER,
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
            "--dir",
            str(tmp_path),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        client = redis.Redis(port=port)
        deadline = Deadline(20)
        while True:
            try:
                client.ping()
                break
            except redis.ConnectionError:
                if deadline.passed() or server.poll() is not None:
                    raise
                time.sleep(0.1)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        server.terminate()
        server.wait(timeout=20)


def campaign(db: ExampleDb) -> RunResult:
    with embedded().serve(PROTOCOL, faults=(FAULT,)) as server:
        options = RunOptions(
            PROTOCOL,
            base_url=server.url + load(PROTOCOL).info.base_path,
            phases=("model",),
            model_sequences=20,
            example_db=db,
        )
        return run(options)


def contents(client: Any) -> dict[bytes, set[bytes]]:
    return {key: set(client.smembers(key)) for key in client.scan_iter()}


def writes(client: Any) -> int:
    stats = client.info("commandstats")
    return sum(int(stats.get(f"cmdstat_{c}", {}).get("calls", 0)) for c in ("sadd", "srem", "expire", "del", "smove"))


def test_a_failure_is_replayed_first_a_readonly_run_writes_nothing_and_a_new_document_replays_nothing(
    redis_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    client = redis.Redis.from_url(redis_url)
    first = campaign(ExampleDb(redis_url))
    failed = {r.requirement.id for r in first.results if r.status is Status.FAILED}
    assert failed == {BROKEN}
    found_after = first.stats["model_first_failure"]
    assert found_after is not None and found_after > 1, "the fault must not be met by the first sequence"
    saved = contents(client)
    assert saved, "the first run kept its failing example"
    prefix = namespace(first.suite_version, PROTOCOL, None, load(PROTOCOL).digest)
    assert all(key.startswith(b"hypothesis-example:" + prefix) for key in saved)

    second = campaign(ExampleDb(redis_url))
    assert {r.requirement.id for r in second.results if r.status is Status.FAILED} == {BROKEN}
    assert second.stats["model_first_failure"] == 1 < found_after  # the saved sequence is tried first

    before, calls = contents(client), writes(client)
    readonly = campaign(ExampleDb(redis_url, readonly=True))
    assert readonly.stats["model_first_failure"] == 1  # it replays too
    assert contents(client) == before and writes(client) == calls  # and writes nothing, expiry included
    assert readonly.meta["example_db"] == {"kind": "redis", "readonly": True}

    # the document changes (its digest): the examples kept for the old one are not replayed
    monkeypatch.setattr(Spec, "digest", property(lambda self: "0" * 64))
    changed = campaign(ExampleDb(redis_url))
    assert changed.stats["model_first_failure"] == found_after  # found again as the first run found it
    new_prefix = namespace(changed.suite_version, PROTOCOL, None, "0" * 64)
    assert any(key.startswith(b"hypothesis-example:" + new_prefix) for key in contents(client))


def test_a_directory_database_is_namespaced_and_a_bad_location_is_refused(tmp_path: Path) -> None:
    db = open_database(ExampleDb(str(tmp_path / "examples")), b"ns/")
    db.save(b"key", b"value")
    assert list(db.fetch(b"key")) == [b"value"]
    assert list(open_database(ExampleDb(str(tmp_path / "examples")), b"other/").fetch(b"key")) == []
    readonly = open_database(ExampleDb(str(tmp_path / "examples"), readonly=True), b"ns/")
    readonly.save(b"key", b"second")
    assert list(readonly.fetch(b"key")) == [b"value"]
    (tmp_path / "file").write_text("")
    from conformance.cli.commands import main

    assert main(["run", "--protocol", "neuro-san", "--example-db", str(tmp_path / "file")]) == 2
    assert main(["run", "--protocol", "neuro-san", "--example-db", "redis://127.0.0.1:1/0"]) == 2
