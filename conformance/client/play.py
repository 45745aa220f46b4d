"""One scenario played: the reference mock started for it (the embedded target, on a free loopback
port, seeded, configured through its admin API with the journal on), the client's command run
against it within a bound, the journal read back and every requirement the scenario decides judged.

The command's process group is killed at the bound, so a client that hangs or floods ends the
scenario with a verdict; its output is kept in files and only its end read back (bounded).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import tempfile
import time
from collections.abc import Mapping, Sequence
from typing import IO, Any

import httpx

from conformance.check.http import tls_context
from conformance.settings.usage import UsageError
from specs.documents import protocol as protocol_info

from ..run.targets import embedded
from .judges import Judged, Play, judge_for, not_verified
from .scenarios import Scenario
from .traffic import traffic

JOURNAL_SIZE = 2_000
"""Exchanges the mock keeps for judging (its journal's most); a flood beyond it is judged by its end."""
OUTPUT_TAIL = 2_000
"""Characters of the client's output kept for the report."""
TOKENS = ("alice-token", "bob-token")
"""The embedded mock's users' tokens (mockserver's defaults, as runner.EMBEDDED_TOKENS)."""
KILL_GRACE_S = 2.0


class ScenarioError(RuntimeError):
    """The mock refused a scenario's configuration: a bug in the kit, not in the client."""


def _admin(client: httpx.Client, method: str, path: str, body: Any) -> None:
    answer = client.request(method, path, json=body)
    if answer.status_code >= 300:
        raise ScenarioError(f"the mock refused {method} /__mock{path}: {answer.status_code} {answer.text[:300]}")


def _tail(stream: IO[bytes]) -> str:
    stream.seek(0, os.SEEK_END)
    size = stream.tell()
    stream.seek(max(0, size - OUTPUT_TAIL))
    return stream.read().decode("utf-8", "replace").strip()


def _kill(process: subprocess.Popen[bytes]) -> None:
    """The whole process group: a client's own children end with it."""
    with contextlib.suppress(ProcessLookupError):  # it ended on its own meanwhile
        os.killpg(process.pid, signal.SIGKILL)
    process.wait(timeout=KILL_GRACE_S)


def environment(scenario: Scenario, base_url: str) -> dict[str, str]:
    """What the client's command is given: the URL the document's paths are appended to (the
    server path included), the protocol and the scenario's name, and for synapse-agent two users'
    tokens."""
    env = {
        "CONFORMANCE_BASE_URL": base_url,
        # not CONFORMANCE_PROTOCOL: that one is the config's, and would start the kit's pytest
        # plugin in a client whose command is a pytest session
        "CONFORMANCE_SCENARIO_PROTOCOL": scenario.protocol,
        "CONFORMANCE_SCENARIO": scenario.name,
        **scenario.env,
    }
    if scenario.protocol == "synapse-agent":
        env["CONFORMANCE_TOKEN"] = scenario.token or TOKENS[0]
        env["CONFORMANCE_SECOND_TOKEN"] = TOKENS[1]
    return env


def run_command(
    command: Sequence[str], env: Mapping[str, str], base_url: str, timeout_s: float
) -> tuple[int | None, float, str]:
    """(exit code or None when killed at the bound, seconds taken, the end of its output)."""
    argv = [arg.replace("{base_url}", base_url) for arg in command]
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        started = time.monotonic()
        try:
            process = subprocess.Popen(
                argv,
                env={**os.environ, **env},
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=err,
                start_new_session=True,
            )
        except OSError as exc:
            raise UsageError(f"cannot run {argv[0]!r}: {exc.strerror or exc}") from None
        try:
            code: int | None = process.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            code = None
        finally:
            if process.poll() is None:
                _kill(process)
        took = time.monotonic() - started
        output = "\n".join(part for part in (_tail(err), _tail(out)) if part)
    return code, took, output


def play(scenario: Scenario, command: Sequence[str], timeout_s: float, seed: int = 0) -> tuple[Play, dict[str, Judged]]:
    """The scenario played against ``command``; each requirement it decides, judged."""
    info = protocol_info(scenario.protocol)
    with (
        embedded().serve(scenario.protocol, seed=seed) as server,
        httpx.Client(base_url=server.url + "/__mock", timeout=10, verify=tls_context()) as admin,
    ):
        _admin(admin, "PUT", "/journal", {"size": JOURNAL_SIZE})
        if scenario.fixtures:
            _admin(admin, "POST", "/fixtures", dict(scenario.fixtures))
        if scenario.stubs:
            _admin(admin, "PUT", "/stubs", dict(scenario.stubs))
        if scenario.chaos:
            _admin(admin, "PUT", "/chaos", {**scenario.chaos, "seed": seed + int(scenario.chaos.get("seed", 0))})
        _admin(admin, "DELETE", "/journal", None)  # the configuration is not the client's traffic
        base_url = server.url + info.base_path
        code, took, output = run_command(command, environment(scenario, base_url), base_url, timeout_s)
        answer = admin.get("/journal", params={"protocol": scenario.protocol, "limit": JOURNAL_SIZE})
        if answer.status_code != 200:
            raise ScenarioError(f"the mock's journal could not be read: {answer.status_code} {answer.text[:300]}")
        entries = answer.json()["entries"]
    played = Play(
        scenario.protocol,
        scenario.name,
        traffic(entries),
        code,
        timeout_s,
        took,
        output,
        journal_full=len(entries) >= JOURNAL_SIZE,
        origin=server.url,
    )
    verdicts: dict[str, Judged] = {}
    for rid in scenario.requirement_ids:
        try:
            verdicts[rid] = judge_for(scenario.protocol, rid.rsplit("-", 1)[1])(played)
        except Exception as exc:  # a judging bug leaves the requirement undecided, never a traceback
            verdicts[rid] = not_verified(f"internal error judging it: {type(exc).__name__}: {exc}")
    return played, verdicts
