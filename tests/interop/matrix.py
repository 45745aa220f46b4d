"""The interop matrix, docs/interop-matrix.md: every real implementation the interop tests run,
requirement by requirement, with the verdict the suite gives it.

The page is written from the snapshots the interop tests hold each implementation to (each module's
``PASSED``, ``FAILED``... sets; each verdict checked by hand in the implementation's interop
document), never from a run: a run that moves a verdict fails its interop test first, and a
snapshot edited without the page fails ``tests/interop/test_matrix.py``.
``python -m tests.interop.matrix`` writes it again; ``--check`` says whether it is current."""

from __future__ import annotations

import argparse
import importlib
import sys
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

from conformance.client.scenarios import scenarios
from conformance.run.suites import suite
from conformance.verdicts.requirements import Authority
from specs.documents import PROTOCOLS
from specs.program import __version__

PAGE = Path(__file__).resolve().parents[2] / "docs" / "interop-matrix.md"


@dataclass(frozen=True)
class Server:
    name: str
    version: str
    protocol: str
    module: str
    """The interop test module holding its snapshot."""
    document: str
    """Its interop document (docs/), where each verdict is checked by hand."""


SERVERS = (
    Server(
        "Agent Protocol Python SDK",
        "agent-protocol 1.0.2",
        "agent-protocol",
        "test_agent_protocol_sdk",
        "interop-agent-protocol-sdk.md",
    ),
    Server(
        "Agent Protocol JavaScript SDK",
        "npm agent-protocol 1.0.5",
        "agent-protocol",
        "test_agent_protocol_js_sdk",
        "interop-agent-protocol-js-sdk.md",
    ),
    Server(
        "AutoGPT Forge",
        "autogpt-forge 0.1.4",
        "agent-protocol",
        "test_autogpt_forge",
        "interop-autogpt-forge.md",
    ),
    Server("neuro-san", "neuro-san 0.7.15", "neuro-san", "test_neuro_san_server", "interop-neuro-san.md"),
    Server(
        "SGR Agent Core",
        "sgr-agent-core 0.7.1",
        "sgr-agent-core",
        "test_sgr_agent_core_server",
        "interop-sgr-agent-core.md",
    ),
)


@dataclass(frozen=True)
class Client:
    name: str
    version: str
    protocol: str
    snapshot: str
    """The dict of test_client_mode holding its verdicts by scenario; ``<snapshot>_NOT_RUN``, when
    there, names the scenarios its driver does not attempt and why."""
    document: str
    """Where its verdicts are checked by hand (docs/)."""


CLIENTS = (
    Client("openai", "openai 2.x", "sgr-agent-core", "OPENAI", "client.md#real-clients-judged"),
    Client("synapseclient", "synapseclient 4.14.0", "synapse-agent", "SYNAPSECLIENT", "client.md#real-clients-judged"),
    Client(
        "agent-protocol-client",
        "agent-protocol-client 1.1.0",
        "agent-protocol",
        "AP_CLIENT",
        "interop-agent-protocol-client.md",
    ),
    Client(
        "neuro-san",
        "neuro-san 0.7.15 (HttpServiceAgentSession)",
        "neuro-san",
        "NEURO_SAN",
        "interop-neuro-san.md#the-client-judged-by-agent-conformance-client",
    ),
)
NOT_YET = "a Synapse server: none is published to run offline (the reference mock stands in)"


def _snapshot(module: ModuleType) -> dict[str, str]:
    """A module's snapshot as one verdict word per requirement."""
    cells: dict[str, str] = {}
    for attribute, word in (
        ("PASSED", "pass"),
        ("FAILED", "**FAIL**"),
        ("NOT_VERIFIED", "not verified"),
        ("BLOCKED", "blocked"),
        ("ADVICE", "advice"),
        ("STATE_DEPENDENT", "pass or **FAIL** (state)"),
        ("DRAWN", "pass or **FAIL** (draw)"),
    ):
        for rid in getattr(module, attribute, ()):
            cells[rid] = word
    return cells


def _interop(name: str) -> ModuleType:
    return importlib.import_module(f"tests.interop.{name}")


def render() -> str:
    lines = [
        "# Interop matrix",
        "",
        f"What this kit ({__version__}) reports about real implementations from the package registries,",
        "requirement by requirement. Each verdict is the snapshot an interop test holds the",
        "implementation to (tests/interop/), checked by hand with curl against the document in the",
        "implementation's interop page; the reference mock passes every requirement (the selfcheck).",
        "Written by `python -m tests.interop.matrix`; `tests/interop/test_matrix.py` keeps it true.",
        "",
        "Verdicts: pass; **FAIL** (a document requirement broken); advice (a practice not followed, never",
        "failing); blocked (another failure left nothing to judge); not verified (nothing to judge);",
        "pass or **FAIL** (state): depends on the server's own state, named so by the report; pass or **FAIL**",
        "(draw): decided by whether generated cases meet a bug the interop page shows by hand.",
        "",
        f"Not in the matrix yet: {NOT_YET}.",
        "",
        "## Servers",
    ]
    for protocol in sorted(PROTOCOLS):
        mine = [s for s in SERVERS if s.protocol == protocol]
        if not mine:
            continue
        snapshots = [_snapshot(_interop(s.module)) for s in mine]
        lines += ["", f"### {protocol}", ""]
        lines.append("| requirement | level | " + " | ".join(f"[{s.version}]({s.document})" for s in mine) + " |")
        lines.append("|---|---|" + "---|" * len(mine))
        for check in suite(protocol).registry:
            req = check.requirement
            level = req.level.value + (" (practice)" if req.authority is Authority.PRACTICE else "")
            cells = " | ".join(snap.get(req.id, "(not run)") for snap in snapshots)
            lines.append(f"| {req.id} | {level} | {cells} |")
        failed = [sum(v.startswith("**FAIL") for v in snap.values()) for snap in snapshots]
        lines += ["", "Failed: " + ", ".join(f"{s.name} {n}" for s, n in zip(mine, failed, strict=True)) + "."]
    lines += [
        "",
        "## Clients",
        "",
        "The client mode (docs/client.md): each scenario of the protocol run with the client's driver",
        "(tests/interop/test_client_mode.py); a scenario the driver does not attempt is named, with why.",
        "",
    ]
    module = _interop("test_client_mode")
    lines.append("| client | scenario | requirement | verdict |")
    lines.append("|---|---|---|---|")
    failed: list[str] = []
    for client in CLIENTS:
        label = f"[{client.version}]({client.document}) ({client.protocol})"
        snapshot = getattr(module, client.snapshot)
        not_run = getattr(module, f"{client.snapshot}_NOT_RUN", {})
        count = 0
        for scenario in sorted(s.name for s in scenarios(client.protocol)):
            if scenario in not_run:
                lines.append(f"| {label} | {scenario} | - | not run: {not_run[scenario]} |")
                continue
            for rid, status in sorted(snapshot.get(scenario, {}).items()):
                word = _CLIENT_WORDS.get(status.value, status.value)
                count += word == "**FAIL**"
                lines.append(f"| {label} | {scenario} | {rid} | {word} |")
        failed.append(f"{client.name} {count}")
    lines += ["", "Failed (requirement verdicts, scenario by scenario): " + ", ".join(failed) + "."]
    return "\n".join(lines) + "\n"


_CLIENT_WORDS = {"failed": "**FAIL**", "passed": "pass"}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.interop.matrix", description=__doc__)
    parser.add_argument("--check", action="store_true", help="exit 1 when the page is not current")
    args = parser.parse_args(argv)
    text = render()
    if args.check:
        current = PAGE.is_file() and PAGE.read_text(encoding="utf-8") == text
        print("current" if current else f"{PAGE.name} is out of date: python -m tests.interop.matrix")
        return 0 if current else 1
    PAGE.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
