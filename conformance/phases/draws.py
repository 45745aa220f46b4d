"""Generated draws that depend on the seed alone, never on what the process imported.

Hypothesis (6.1xx) mixes into its draws constants it mines from the source of every "local"
module in ``sys.modules`` (any module outside site-packages and the standard library: the suite
itself when installed editable, a user's conftest, whatever the process imported before the run),
drawing one of them for about one primitive draw in twenty. So the cases a run generated moved
when an unrelated module was imported first (the CLI importing ``multiprocessing`` moved a
neuro-san finding), differed between an editable and a wheel install, and changed whenever a
string literal anywhere in the suite changed. Inside ``seed_only()`` that pool is empty: a run's
cases are a function of the seed, the document and the Hypothesis version.

The pool is a private detail of Hypothesis (``providers._get_local_constants`` and its
``CONSTANTS_CACHE``); when a release renames it, ``pinned()`` says so and the test that imports
a module between two runs (tests/conformance/phases/test_draws.py) fails.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any


def _providers() -> Any:
    from hypothesis.internal.conjecture import providers

    return providers


def pinned() -> bool:
    """Whether this Hypothesis has the local-constants pool ``seed_only`` empties."""
    providers = _providers()
    try:
        from hypothesis.internal.constants_ast import Constants  # noqa: F401
    except ImportError:
        return False
    return hasattr(providers, "_get_local_constants") and hasattr(providers, "CONSTANTS_CACHE")


@contextmanager
def seed_only() -> Iterator[None]:
    """Within it, Hypothesis draws no constant mined from the modules the process holds. The
    cache of permitted constants is cleared on the way in and out, so that neither side sees
    the other's pool."""
    if not pinned():
        yield
        return
    providers = _providers()
    from hypothesis.internal.constants_ast import Constants

    mined = providers._get_local_constants
    empty = Constants()
    providers._get_local_constants = lambda: empty
    providers.CONSTANTS_CACHE.cache.clear()
    try:
        yield
    finally:
        providers._get_local_constants = mined
        providers.CONSTANTS_CACHE.cache.clear()
