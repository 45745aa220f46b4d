"""The heap of a long-lived process of the kit, out of the cyclic collector's way.

A suite run, the mock and the proxy hold hundreds of thousands of long-lived objects (the loaded
modules, the compiled document, the mock's stores); CPython's full collections walk every one of
them, about every 70,000 allocations by default: a tenth of a suite run's CPU (bench/README.md).
``settle()`` moves what exists out of the collector's sight (``gc.freeze``) and collects the
young generation less often; what is made afterwards is collected as before.
"""

from __future__ import annotations

import gc

YOUNG = 50_000
"""Allocations between collections of the young generation (CPython's default: 700)."""


def settle() -> None:
    """Collect what is garbage now, freeze the rest and space the collections out. Cheap to call
    again (the frozen objects are not walked): a process that runs many runs calls it at each."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(YOUNG, 20, 20)
