"""Settings of one mock server instance; every limit the mock enforces is named here."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from specs.documents import PROTOCOLS

DEFAULT_TOKENS = {"alice": "alice-token", "bob": "bob-token"}


@dataclass(frozen=True, slots=True)
class MockLimits:
    max_json_bytes: int = 1 << 20
    """Largest JSON request body (1 MiB); larger ones get 413 in the protocol's error shape."""
    max_upload_bytes: int = 10 << 20
    """Largest artifact upload (10 MiB)."""
    max_json_depth: int = 100
    """Deepest nesting of arrays and objects in a JSON body; deeper ones get the protocol's
    invalid-body status (a decoder, validator or encoder would otherwise exhaust the recursion limit)."""
    max_stored_objects: int = 200_000
    """Per protocol store (tasks, steps, artifacts, agents, sessions, jobs); beyond it: 507."""
    max_stored_bytes: int = 512 << 20
    """Artifact bytes held in memory; beyond it: 507."""
    max_open_streams: int = 256
    """Concurrent streaming responses; beyond it: 503 with Retry-After."""


@dataclass(frozen=True, slots=True)
class MockConfig:
    protocols: tuple[str, ...] = tuple(pid for pid, info in PROTOCOLS.items() if info.mock)
    tokens: dict[str, str] = field(default_factory=lambda: dict(DEFAULT_TOKENS))
    seed: int = 0
    job_seconds: float = 0.3
    """How long a Synapse chat job stays PROCESSING."""
    stream_delay: float = 0.0
    """Pause between streamed frames, to make streams observable as they are produced."""
    faults: tuple[str, ...] = ()
    limits: MockLimits = field(default_factory=MockLimits)
    chaos: tuple[Mapping[str, Any], ...] = ()
    """Chaos rules as mappings (chaos.py); they keep the mock correct but unreliable."""
    chaos_seed: int | None = None
    """Seed of the chaos draws; None uses ``seed``."""
    journal: int = 0
    """Entries the request journal keeps; 0 leaves it off until the admin API turns it on."""
    access_log: bool = False
    verbose: bool = False
    """Also log request and response bodies (implies the access log)."""
    cors: bool = True
    """Answer browsers from any origin, as the real sgr-agent-core does."""
    fixtures: Mapping[str, Any] | None = None
    """A fixtures document (fixtures.py) loaded before the first request."""
    stubs: Mapping[str, Any] | None = None
    """A stubs document (stubs.py): answers given instead of the handlers', and data stubs."""
    record: str | None = None
    """A real server's root URL: every request is forwarded there and recorded as stubs (record.py)."""
    host: str = "127.0.0.1"
    """The address it listens on: a ``Host`` naming it is answered (gate.py), and a non-loopback
    one needs ``admin_token``."""
    allowed_hosts: tuple[str, ...] = ()
    """More names it answers to (``--allowed-host``): ``name``, ``.suffix`` for a domain and its
    subdomains, ``*`` for any (which turns the DNS-rebinding guard off)."""
    admin_token: str | None = None
    """When set, every admin request must carry ``Authorization: Bearer <admin_token>``."""
