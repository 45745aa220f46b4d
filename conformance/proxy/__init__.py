"""``conformance proxy``: verdicts from live traffic between a real client and a real server.

A reverse proxy (forward.py, on the HTTP/1.1 plumbing of wire.py) passes every request and answer
through byte for byte as they arrive, and hands each exchange to the observer (observer.py) after
its bytes went on, which judges it against the
document (document.py) and the protocol's passive checks (passive/<protocol>.py) with the suite's
own validators, stream readers and requirement registry; report.py turns the tally into the
suite's results model, so the usual report writers apply.
"""

from __future__ import annotations

from typing import Any

__all__ = ["Observer", "ProxyConfig", "ProxyServer", "serve"]


def __getattr__(name: str) -> Any:
    """Lazy: the CLI imports ``proxy.cli`` for its parser without loading aiohttp and the checks."""
    if name == "Observer":
        from .observer import Observer

        return Observer
    if name in ("ProxyConfig", "ProxyServer", "serve"):
        from . import forward

        return getattr(forward, name)
    raise AttributeError(name)
