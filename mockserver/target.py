"""The reference mock as the target the suite asks for when it is given no base URL
(conformance/run/targets.py): one protocol on a free loopback port, with the named faults."""

from __future__ import annotations

from .config import MockConfig
from .descriptor import catalogue
from .embedded import EmbeddedServer
from .faults import Fault


def serve(protocol: str, *, seed: int = 0, faults: tuple[str, ...] = ()) -> EmbeddedServer:
    return EmbeddedServer(MockConfig(protocols=(protocol,), seed=seed, faults=faults, job_seconds=0.3))


def faults() -> list[Fault]:
    return list(catalogue().values())
