"""A mock (optionally with faults) behind the proxy, both on loopback ports in this process."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from conformance.proxy.forward import ProxyConfig, ProxyServer
from conformance.proxy.observer import Selection
from conformance.verdicts.results import RunResult, Status
from mockserver import EmbeddedServer, MockConfig
from specs.documents import load


@dataclass
class Proxied:
    proxy: ProxyServer
    upstream: str
    lines: list[str] = field(default_factory=list)

    @property
    def url(self) -> str:
        return self.proxy.url

    @property
    def base(self) -> str:
        """The proxy URL the document's paths are appended to (base path included)."""
        return self.proxy.url + load(self.proxy.config.protocol).info.base_path

    def result(self) -> RunResult:
        from conformance.proxy.report import run_result

        return run_result(self.proxy.observer)

    def statuses(self) -> dict[str, Status]:
        return {r.requirement.id: r.status for r in self.result().results}

    def failed(self) -> dict[str, str]:
        return {r.requirement.id: r.message for r in self.result().results if r.status is Status.FAILED}

    def passed(self) -> set[str]:
        return {r.requirement.id for r in self.result().results if r.status is Status.PASSED}

    def advised(self) -> set[str]:
        """Practice requirements the traffic showed broken: reported as advice, never failed."""
        return {r.requirement.id for r in self.result().results if r.status is Status.ADVICE}


ProxyFactory = Callable[..., AbstractContextManager[Proxied]]


@contextmanager
def proxied(
    protocol: str,
    *faults: str,
    errors: bool = False,
    timeout: float = 5.0,
    tokens: tuple[str, ...] = (),
    selection: Selection | None = None,
    har: Path | None = None,
    **mock: Any,
) -> Iterator[Proxied]:
    lines: list[str] = []
    config = MockConfig(protocols=(protocol,), faults=faults, **mock)
    with EmbeddedServer(config) as server:
        proxy_config = ProxyConfig(
            protocol,
            server.url,
            tokens=tokens,
            errors=errors,
            timeout=timeout,
            stream_seconds=4 * timeout,
            console=lines.append,
            selection=selection or Selection(),
            har=har,
        )
        with ProxyServer(proxy_config) as proxy:
            yield Proxied(proxy, server.url, lines)


@pytest.fixture
def through_proxy() -> ProxyFactory:
    return proxied
