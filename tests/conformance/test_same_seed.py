"""One seed, one set of requests: the suite's scenario and model phases, run twice with the same
seed, send the same requests, so a recording of the first run (the mock in front of another mock,
``--record``) answers every request of the second (``--stubs``) and the verdicts agree. An id, a
token or a text a check invents must come from the seed (``Context.draws``): a fresh uuid4 is a
request no recording holds, and a finding whose replay sends something else. The property-based
phase is left out: its flows interleave differently from run to run (tests/interop/test_record.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from conformance.engine.runner import EMBEDDED_TOKENS
from mockserver import EmbeddedServer, MockConfig
from specs.documents import PROTOCOLS, load
from tests.warmcli import WarmCli

JOURNAL = 2000


def _run(cli: WarmCli, protocol: str, url: str, report_dir: Path) -> dict[str, str]:
    """``conformance run`` in a process of its own, forked from the warm launcher (tests/warmcli.py:
    PYTHONHASHSEED pinned, as the command pins it), not paying the kit's import each time."""
    alice, bob = EMBEDDED_TOKENS
    command = ["run", "--protocol", protocol, "--base-url", url, "--seed", "0"]
    command += ["--phase", "scenario", "--phase", "model", "--report-dir", str(report_dir), "-q"]
    command += ["--token", alice, "--second-token", bob] if protocol == "synapse-agent" else []
    done = cli.run(command, report_dir.parent, timeout=300)
    results: dict[str, Any] = json.loads((report_dir / "results.json").read_text(encoding="utf-8"))
    assert results["fatal"] is None, done.stderr[-2000:]
    return {r["id"]: r["status"] for r in results["requirements"]}


@pytest.mark.slow  # two whole runs through the command line
@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_recording_of_one_run_answers_the_next_run_of_its_seed(
    protocol: str, tmp_path: Path, warm_cli: WarmCli
) -> None:
    base_path = load(protocol).info.base_path
    only = (protocol,)
    with (
        EmbeddedServer(MockConfig(protocols=only)) as server,
        EmbeddedServer(MockConfig(protocols=only, record=server.url)) as recorder,
    ):
        first = _run(warm_cli, protocol, recorder.url + base_path, tmp_path / "first")
        document = httpx.get(recorder.url + "/__mock/recording", timeout=60).json()
    with EmbeddedServer(MockConfig(protocols=only, stubs=document, journal=JOURNAL)) as replay:
        second = _run(warm_cli, protocol, replay.url + base_path, tmp_path / "second")
        journal = httpx.get(replay.url + "/__mock/journal", params={"limit": JOURNAL}, timeout=30).json()
    assert 0 < journal["total"] < JOURNAL, "the journal overflowed: what was missed cannot be told"
    missed = [
        f"{e['method']} {e['path']}" for e in journal["entries"] if e["stub"] is None and e["operation"] is not None
    ]
    assert not missed, f"requests the first run of seed 0 never sent: {missed[:10]}"
    assert second == first
