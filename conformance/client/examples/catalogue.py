"""The broken-client catalogue: each entry a client that breaks named client requirements in one
scenario, as the mock's fault catalogue names the server requirements each fault breaks. The same
client without ``--break`` is the fair variant: it must pass every requirement of every scenario.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

CLIENTS = {
    "agent-protocol": "conformance.client.examples.agent_protocol",
    "synapse-agent": "conformance.client.examples.synapse_agent",
    "sgr-agent-core": "conformance.client.examples.sgr_agent_core",
    "neuro-san": "conformance.client.examples.neuro_san",
}
"""The example client of each protocol, a module run with ``python -m``."""


@dataclass(frozen=True, slots=True)
class BrokenClient:
    protocol: str
    scenario: str
    flags: tuple[str, ...]
    breaks: tuple[str, ...]
    """Requirement ids reported failed (a practice one: advice)."""
    description: str

    def command(self, python: str = sys.executable) -> list[str]:
        return [python, "-m", CLIENTS[self.protocol], *self.flags]

    @property
    def name(self) -> str:
        flags = " ".join(self.flags).removeprefix("--break ")
        return f"{self.protocol}:{self.scenario}" + (f":{flags}" if flags else "")


def _b(protocol: str, scenario: str, flag: str, breaks: tuple[str, ...], description: str) -> BrokenClient:
    flags = ("--break", flag) if not flag.startswith("--") else (flag,)
    return BrokenClient(protocol, scenario, flags, breaks, description)


BROKEN: tuple[BrokenClient, ...] = (
    _b("agent-protocol", "list-pages", "first-page-only", ("AP-CLIENT-010",), "reads page 1 and stops"),
    _b("agent-protocol", "list-pages", "past-the-end", ("AP-CLIENT-010",), "asks for a page after the last"),
    _b("agent-protocol", "retry-after", "ignore-retry-after", ("AP-CLIENT-002",), "retries a 429 at once"),
    _b("agent-protocol", "flaky-pages", "ignore-retry-after", ("AP-CLIENT-002",), "retries a 503 page at once"),
    _b("agent-protocol", "retry-after", "bad-body", ("AP-CLIENT-001",), 'sends {"input": 42} (input is a string)'),
    _b(
        "agent-protocol",
        "busy",
        "flood",
        ("AP-CLIENT-002", "AP-CLIENT-003"),
        "retries a 503 at once and without end (the scenario's bound ends it)",
    ),
    _b("agent-protocol", "unknown-fields", "strict-fields", ("AP-CLIENT-004",), "crashes on a field it does not know"),
    _b("synapse-agent", "list-pages", "first-page-only", ("SYN-CLIENT-010",), "ignores nextPageToken"),
    _b("synapse-agent", "job-poll", "no-poll", ("SYN-CLIENT-011",), "takes the first 202 as the answer"),
    _b("synapse-agent", "job-poll", "tight-poll", ("SYN-CLIENT-012",), "polls the job without pause"),
    _b("synapse-agent", "retry-after", "ignore-retry-after", ("SYN-CLIENT-002",), "retries a 503 at once"),
    _b("synapse-agent", "retry-after", "bad-body", ("SYN-CLIENT-001",), "sends an agentAccessLevel the enum lacks"),
    _b("synapse-agent", "revoked-token", "retry-401", ("SYN-CLIENT-005",), "sends a refused request 20 more times"),
    _b("synapse-agent", "unknown-fields", "strict-fields", ("SYN-CLIENT-004",), "crashes on a field it does not know"),
    _b(
        "sgr-agent-core", "clarification", "skip-clarification", ("SGR-CLIENT-010",), "takes the question as the answer"
    ),
    _b("sgr-agent-core", "clarification", "new-chat", ("SGR-CLIENT-010",), "sends the answer as a new chat"),
    _b("sgr-agent-core", "cut-stream", "take-cut-as-complete", ("SGR-CLIENT-006",), "prints a stream without [DONE]"),
    _b("sgr-agent-core", "retry-after", "ignore-retry-after", ("SGR-CLIENT-002",), "retries a 429 at once"),
    _b("sgr-agent-core", "retry-after", "bad-body", ("SGR-CLIENT-001",), "sends messages as a string"),
    _b("sgr-agent-core", "unknown-fields", "strict-fields", ("SGR-CLIENT-004",), "crashes on a field it does not know"),
    _b(
        "sgr-agent-core",
        "unknown-event",
        "strict-events",
        ("SGR-CLIENT-007",),
        "crashes on an event type it does not know",
    ),
    _b("neuro-san", "continue-conversation", "forget-context", ("NS-CLIENT-010",), "starts each turn afresh"),
    _b("neuro-san", "cut-stream", "take-cut-as-complete", ("NS-CLIENT-006",), "prints the last text it saw"),
    _b("neuro-san", "retry-after", "ignore-retry-after", ("NS-CLIENT-002",), "retries a 503 at once"),
    _b("neuro-san", "retry-after", "bad-body", ("NS-CLIENT-001",), "sends user_message as a string"),
    _b("neuro-san", "unknown-fields", "strict-fields", ("NS-CLIENT-004",), "crashes on a field it does not know"),
    _b(
        "synapse-agent",
        "busy",
        "flood",
        ("SYN-CLIENT-002", "SYN-CLIENT-003"),
        "retries a 503 at once and without end (the scenario's bound ends it)",
    ),
    _b(
        "sgr-agent-core",
        "busy",
        "flood",
        ("SGR-CLIENT-002", "SGR-CLIENT-003"),
        "retries a 429 at once and without end (the scenario's bound ends it)",
    ),
    _b(
        "neuro-san",
        "busy",
        "flood",
        ("NS-CLIENT-002", "NS-CLIENT-003"),
        "retries a 503 at once and without end (the scenario's bound ends it)",
    ),
    _b("agent-protocol", "redirect", "ignore-redirect", ("AP-CLIENT-008",), "takes a 307 for an empty answer"),
    _b("agent-protocol", "gzip", "gzip-undecoded", ("AP-CLIENT-009",), "accepts gzip, reads the bytes undecoded"),
    _b("synapse-agent", "redirect", "ignore-redirect", ("SYN-CLIENT-008",), "takes a 307 for an empty answer"),
    _b("synapse-agent", "gzip", "gzip-undecoded", ("SYN-CLIENT-009",), "accepts gzip, reads the bytes undecoded"),
    _b("sgr-agent-core", "redirect", "ignore-redirect", ("SGR-CLIENT-008",), "takes a 307 for an empty answer"),
    _b(
        "sgr-agent-core",
        "redirect-post",
        "redirect-as-get",
        ("SGR-CLIENT-001", "SGR-CLIENT-008"),
        "follows a 308 with a GET and no body (a GET the document has no operation for)",
    ),
    _b("sgr-agent-core", "gzip", "gzip-undecoded", ("SGR-CLIENT-009",), "accepts gzip, reads the bytes undecoded"),
    _b("neuro-san", "redirect", "ignore-redirect", ("NS-CLIENT-008",), "takes a 307 for an empty answer"),
    _b("neuro-san", "gzip", "gzip-undecoded", ("NS-CLIENT-009",), "accepts gzip, reads the bytes undecoded"),
)

MISBEHAVING: tuple[BrokenClient, ...] = (
    _b("agent-protocol", "list-pages", "--hang", ("AP-CLIENT-010",), "never finishes: killed at the bound"),
    _b("agent-protocol", "list-pages", "--exit-at-once", ("AP-CLIENT-010",), "exits 0 having sent nothing"),
)
"""Clients that end a scenario badly in themselves: each must end within its bound with a verdict."""
