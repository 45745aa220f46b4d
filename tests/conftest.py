"""Shared fixtures: a real mock server on a free loopback port, and an httpx client for it."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Any

import httpx
import pytest

from mockserver import MockConfig
from mockserver.embedded import EmbeddedServer


@contextmanager
def _serve(**settings: Any) -> Iterator[EmbeddedServer]:
    with EmbeddedServer(MockConfig(**settings)) as server:
        yield server


@pytest.fixture
def serve() -> Callable[..., AbstractContextManager[EmbeddedServer]]:
    """``with serve(protocols=("agent-protocol",), faults=("x",)) as server: server.url``."""
    return _serve


@pytest.fixture(scope="module")
def mock_url() -> Iterator[str]:
    """One all-protocol mock per test module (fast jobs so async tests stay quick)."""
    with _serve(job_seconds=0.2) as server:
        yield server.url


@pytest.fixture
def http(mock_url: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=mock_url, timeout=10) as client:
        yield client


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests that talk to real third-party packages are slow too: ``-m "not slow"`` leaves them out."""
    for item in items:
        if item.get_closest_marker("interop") is not None:
            item.add_marker(pytest.mark.slow)
