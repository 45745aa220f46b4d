"""Dedicated virtualenvs for real peer servers whose pins cannot share the project's venv.

``peer_python("agent-protocol==1.0.2")`` creates (once) ``.peers/agent-protocol-1.0.2/`` at the
repository root with ``python -m venv`` and ``pip install``, bounded in time, and returns the
venv's interpreter. A failed or timed-out install raises :class:`PeerUnavailable` whose message is
pip's last error line, for ``pytest.skip``. A venv is reused only when its install completed
(a ``.installed`` marker written last); a half-built one is removed and rebuilt. Builds of one
venv are serialised by a lock file beside it.

``node_modules("agent-protocol@1.0.5")`` does the same for an npm package: ``npm install`` once into
``.peers/npm-agent-protocol-1.0.5/``, bounded, marked and locked alike; the caller runs ``node`` with
``NODE_PATH`` set to the folder it returns. Without node or npm it raises :class:`PeerUnavailable`.

Servers started from these venvs (``serve``) bind 127.0.0.1 only, are waited for with a bound,
and are stopped by their own PID.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[2]
PEERS = ROOT / ".peers"
INSTALL_TIMEOUT_S = 300.0


class PeerUnavailable(RuntimeError):
    """The peer's venv could not be built or its server did not come up; the message says why."""


_failed: dict[str, PeerUnavailable] = {}
"""Installs that failed in this process, so that each is tried once."""


def venv_dir(name: str) -> Path:
    return PEERS / name.replace("==", "-").replace("[", "-").replace("]", "").replace(",", "-")


def _last_error(output: str) -> str:
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    for line in reversed(lines):
        if line.startswith("ERROR") or "Error" in line or "error:" in line:
            return line
    return lines[-1] if lines else "(no output)"


def peer_python(
    *requirements: str,
    name: str | None = None,
    python: str = sys.executable,
    timeout_s: float = INSTALL_TIMEOUT_S,
) -> Path:
    """The interpreter of a venv holding exactly ``requirements``, built on first use.

    ``python`` is the interpreter the venv is created from (the venv gets its version).
    """
    home = venv_dir(name or requirements[0])
    if str(home) in _failed:
        raise _failed[str(home)]
    PEERS.resolve().mkdir(parents=True, exist_ok=True)  # .peers may be a symlink to a shared folder
    # One builder at a time per venv (pytest workers, several checkouts sharing .peers); a second
    # one waits, then finds the venv complete.
    with open(f"{home}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            return _build(home, requirements, python, timeout_s)
        except PeerUnavailable as exc:
            _failed[str(home)] = exc
            raise


def _build(home: Path, requirements: tuple[str, ...], python: str, timeout_s: float) -> Path:
    interpreter = home / "bin" / "python"
    marker = home / ".installed"
    wanted = "\n".join(requirements)
    if marker.is_file() and marker.read_text() == wanted and interpreter.exists():
        return interpreter
    shutil.rmtree(home, ignore_errors=True)
    deadline = time.monotonic() + timeout_s
    steps = (
        [python, "-m", "venv", str(home)],
        [str(interpreter), "-m", "pip", "install", "-q", "--disable-pip-version-check", *requirements],
    )
    for command in steps:
        left = deadline - time.monotonic()
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=max(left, 1.0), check=False)
        except subprocess.TimeoutExpired:
            shutil.rmtree(home, ignore_errors=True)
            raise PeerUnavailable(
                f"installing {' '.join(requirements)} did not finish within {timeout_s:g} s"
            ) from None
        except OSError as exc:
            shutil.rmtree(home, ignore_errors=True)
            raise PeerUnavailable(f"{command[0]}: {exc}") from None
        if done.returncode != 0:
            shutil.rmtree(home, ignore_errors=True)
            raise PeerUnavailable(
                f"{' '.join(command[2:4])} {' '.join(requirements)} failed: {_last_error(done.stderr + done.stdout)}"
            )
    marker.write_text(wanted)
    return interpreter


def node_modules(*packages: str, timeout_s: float = INSTALL_TIMEOUT_S) -> Path:
    """The ``node_modules`` folder of an npm install of exactly ``packages``, made on first use."""
    home = PEERS / ("npm-" + packages[0].replace("@", "-").replace("/", "-"))
    if str(home) in _failed:
        raise _failed[str(home)]
    PEERS.resolve().mkdir(parents=True, exist_ok=True)
    with open(f"{home}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            return _npm_install(home, packages, timeout_s)
        except PeerUnavailable as exc:
            _failed[str(home)] = exc
            raise


def _npm_install(home: Path, packages: tuple[str, ...], timeout_s: float) -> Path:
    marker = home / ".installed"
    wanted = "\n".join(packages)
    if marker.is_file() and marker.read_text() == wanted:
        return home / "node_modules"
    for tool in ("node", "npm"):
        if shutil.which(tool) is None:
            raise PeerUnavailable(f"{tool} is not installed (Debian: apt-get install nodejs npm)")
    shutil.rmtree(home, ignore_errors=True)
    home.mkdir(parents=True)
    command = ["npm", "install", "--prefix", str(home), "--no-audit", "--no-fund", *packages]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout_s, check=False)
    except subprocess.TimeoutExpired:
        shutil.rmtree(home, ignore_errors=True)
        raise PeerUnavailable(f"npm install {' '.join(packages)} did not finish within {timeout_s:g} s") from None
    if done.returncode != 0:
        shutil.rmtree(home, ignore_errors=True)
        raise PeerUnavailable(f"npm install {' '.join(packages)} failed: {_last_error(done.stderr + done.stdout)}")
    marker.write_text(wanted)
    return home / "node_modules"


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _stop(process: subprocess.Popen[bytes]) -> None:
    """Stop the process we started, by its PID: SIGTERM, then SIGKILL after a bound."""
    if process.poll() is not None:
        return
    os.kill(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        os.kill(process.pid, signal.SIGKILL)
        process.wait(timeout=10)


@contextmanager
def serve(
    command: Sequence[str],
    ready_url: str,
    *,
    timeout_s: float = 30.0,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
    log: Path | None = None,
) -> Iterator[subprocess.Popen[bytes]]:
    """Start ``command``, wait (bounded) until ``ready_url`` answers any HTTP status, stop it by PID after."""
    sink = log.open("wb") if log else subprocess.DEVNULL
    process = subprocess.Popen(
        list(command),
        stdout=sink,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        env={**os.environ, **(env or {})},
        cwd=cwd,
    )
    try:
        deadline = time.monotonic() + timeout_s
        while True:
            if process.poll() is not None:
                tail = log.read_text(errors="replace")[-500:] if log else ""
                raise PeerUnavailable(f"the peer server exited with {process.returncode} before answering: {tail}")
            try:
                httpx.get(ready_url, timeout=1.0)
                break
            except httpx.HTTPError:
                if time.monotonic() > deadline:
                    raise PeerUnavailable(
                        f"the peer server did not answer {ready_url} within {timeout_s:g} s"
                    ) from None
                time.sleep(0.2)
        yield process
    finally:
        _stop(process)
        if log:
            sink.close()  # type: ignore[union-attr]


def skip_reason(exc: PeerUnavailable) -> str:
    return f"peer unavailable: {exc}"


@dataclass(frozen=True)
class CliRun:
    """What ``python -m conformance run`` reported, read back from its results.json."""

    exit_code: int
    fatal: str | None
    statuses: dict[str, str]
    messages: dict[str, str]
    report_dir: Path
    state_dependent: frozenset[str] = frozenset()
    """The requirements the report itself names as depending on the server's own state."""

    def ids(self, status: str) -> set[str]:
        return {rid for rid, got in self.statuses.items() if got == status}

    def assert_verdicts(
        self,
        passed: set[str],
        failed: set[str],
        not_verified: set[str],
        either: frozenset[str] = frozenset(),
        blocked: frozenset[str] = frozenset(),
        advice: frozenset[str] = frozenset(),
        drawn: frozenset[str] = frozenset(),
    ) -> None:
        """The snapshot of a real server: any change means the suite or the server changed.

        ``either``: requirements whose verdict depends on the server's own state between runs (each
        named with its reason where the snapshot is declared); they must pass or fail, nothing else,
        and the report must name each of them as state-dependent: a reader of the report alone must
        know which verdicts a second run may move. ``advice``: practice requirements the server does
        not follow (never a failure). ``drawn``: requirements the property-based phase decides by
        whether its generated cases meet a server bug the interop page shows by hand (a fresh server,
        the same seed, and runs differ by the ids the server hands out); they must pass or fail."""
        unnamed = either - self.state_dependent
        assert not unnamed, f"the report does not say these depend on the server's state: {sorted(unnamed)}"
        either |= drawn
        for rid in either:
            assert self.statuses.get(rid) in ("passed", "failed"), f"{rid}: {self.statuses.get(rid)}"
        got = {
            "passed": self.ids("passed") - either,
            "failed": self.ids("failed") - either,
            "not verified": self.ids("not verified") - either,
            "blocked": self.ids("blocked") - either,
            "advice": self.ids("advice") - either,
        }
        expected = {
            "passed": passed,
            "failed": failed,
            "not verified": not_verified,
            "blocked": set(blocked),
            "advice": set(advice),
        }
        changed = {rid for kind in got for rid in got[kind] ^ expected[kind]}
        assert got == expected, {rid: f"{self.statuses.get(rid)}: {self.messages.get(rid)}" for rid in changed}


def run_suite(protocol: str, base_url: str, report_dir: Path, *extra: str, timeout_s: float = 300) -> CliRun:
    """The suite exactly as a vendor runs it: the CLI in its own process, which pins string hashing,
    so a snapshot of verdicts for one seed does not depend on how pytest was started."""
    command = [
        sys.executable,
        "-m",
        "conformance",
        "run",
        "--protocol",
        protocol,
        "--base-url",
        base_url,
        "--report-dir",
        str(report_dir),
        "--seed",
        "0",
        "--max-examples",
        "5",
        "--timeout",
        "5",
        "--budget",
        "180",
        "-q",
        *extra,
    ]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONHASHSEED"}
    done = subprocess.run(command, capture_output=True, text=True, timeout=timeout_s, env=env, check=False)
    results = json.loads((report_dir / "results.json").read_text())
    assert results["exit_code"] == done.returncode, done.stderr[-2000:]
    return CliRun(
        done.returncode,
        results["fatal"],
        {r["id"]: r["status"] for r in results["requirements"]},
        {r["id"]: r["message"] for r in results["requirements"]},
        report_dir,
        frozenset(results.get("state_dependent") or {}),
    )
