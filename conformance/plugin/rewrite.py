"""Imports the pytest plugin makes without pytest's assertion rewriting (``unrewritten``)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def unrewritten() -> Iterator[None]:
    """Imports made in the block skip pytest's assertion rewriting. pytest rewrites every module of
    each distribution that has a pytest11 entry point (schemathesis, hypothesis, anyio and this kit:
    about 370 modules a run imports), and where bytecode is not written (PYTHONDONTWRITEBYTECODE,
    a read-only install) it parses and recompiles all of them in every process: 1.8 of the 2.8 s of
    CPU a worker spent before its first item (bench/README.md). None of them is a test module, so
    the suite's own imports are made without the hook; the user's test modules are rewritten as
    ever (they are imported at collection, outside these blocks)."""
    hooks = [f for f in sys.meta_path if type(f).__name__ == "AssertionRewritingHook"]
    for hook in hooks:
        sys.meta_path.remove(hook)
    try:
        yield
    finally:
        sys.meta_path[:0] = hooks
