"""Generated draws that depend on the seed alone, never on what the process imported.

Hypothesis (6.1xx) mixes into its draws constants it mines from the source of every "local"
module in ``sys.modules`` (any module outside site-packages and the standard library: the suite
itself when installed editable, a user's conftest, whatever the process imported before the run),
drawing one of them for about one primitive draw in twenty. So the cases a run generated moved
when an unrelated module was imported first (the CLI importing ``multiprocessing`` moved a
neuro-san finding), differed between an editable and a wheel install, and changed whenever a
string literal anywhere in the suite changed. Inside ``seed_only()`` that pool is empty: a run's
cases are a function of the seed, the document and the Hypothesis version.

The pool is a private detail of Hypothesis (its providers' local constants and their cache, named
in conformance/run/internals.py); when a release renames it, ``pinned()`` says so and the test that imports
a module between two runs (tests/conformance/phases/test_draws.py) fails.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from ..check import internals


def pinned() -> bool:
    """Whether this Hypothesis has the local-constants pool ``seed_only`` empties."""
    try:
        for name in ("hypothesis.local_constants", "hypothesis.constants_cache", "hypothesis.Constants"):
            internals.get(name)
    except internals.InternalMoved:
        return False
    return True


@contextmanager
def seed_only() -> Iterator[None]:
    """Within it, Hypothesis draws no constant mined from the modules the process holds. The
    cache of permitted constants is cleared on the way in and out, so that neither side sees
    the other's pool."""
    if not pinned():
        yield
        return
    empty = internals.get("hypothesis.Constants")()
    cache = internals.get("hypothesis.constants_cache").cache
    mined = internals.replace("hypothesis.local_constants", lambda: empty)
    cache.clear()
    try:
        yield
    finally:
        internals.replace("hypothesis.local_constants", mined)
        cache.clear()
