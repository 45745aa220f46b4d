"""The server a run tests when no base URL is given: a target the suite asks for by name.

The suite does not import the reference mock; it asks the target factory named here, a module
with ``serve(protocol, seed=, faults=)`` (a context manager whose ``url`` is the server root) and
``faults()`` (the fault catalogue selfcheck proves the suite against). The kit's own is the
embedded reference mock (mockserver/target.py); ``CONFORMANCE_EMBEDDED_TARGET`` names another.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import Protocol, cast

EMBEDDED = "mockserver.target"


class Server(Protocol):
    url: str


class DeclaredFault(Protocol):
    """What selfcheck needs of a fault: which requirements a correct suite reports failed, and which
    practice ones it reports advice."""

    @property
    def name(self) -> str: ...
    @property
    def protocol(self) -> str: ...
    @property
    def breaks(self) -> tuple[str, ...]: ...
    @property
    def advises(self) -> tuple[str, ...]: ...
    @property
    def description(self) -> str: ...
    @property
    def hangs(self) -> bool: ...


class Factory(Protocol):
    def serve(
        self, protocol: str, *, seed: int = 0, faults: tuple[str, ...] = ()
    ) -> AbstractContextManager[Server]: ...

    def faults(self) -> Sequence[DeclaredFault]: ...


def embedded() -> Factory:
    return cast(Factory, importlib.import_module(os.environ.get("CONFORMANCE_EMBEDDED_TARGET", EMBEDDED)))
