"""Every library internal the suite leans on is where the kit expects it, with the parameters the
suite calls or wraps it with: an upgrade that moves one fails here, naming it."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import pytest

from conformance.check import internals

REPO = Path(__file__).resolve().parents[3]


@pytest.mark.parametrize("name", sorted(internals.INTERNALS))
def test_every_internal_is_where_the_kit_expects_it(name: str) -> None:
    internal = internals.INTERNALS[name]
    value = internals.get(name, None) if internal.optional else internals.get(name)
    if value is None:
        pytest.skip(f"{name} is absent from this release (optional: {internal.why})")
    if internal.parameters is not None:
        names = tuple(inspect.signature(value).parameters)[: len(internal.parameters)]
        assert names == internal.parameters, f"{name}: the suite calls it as {internal.parameters}, it takes {names}"


def test_a_moved_internal_is_named_with_the_library_version() -> None:
    internals.INTERNALS["test.moved"] = internals.Internal("schemathesis.core", "no_such_thing", "a test")
    try:
        with pytest.raises(internals.InternalMoved, match=r"schemathesis\.core\.no_such_thing .* schemathesis \d"):
            internals.get("test.moved")
    finally:
        del internals.INTERNALS["test.moved"]


def test_replace_puts_a_value_in_place_and_gives_back_the_original() -> None:
    original = internals.get("schemathesis.request")
    previous = internals.replace("schemathesis.request", print)
    try:
        assert previous is original
        assert internals.get("schemathesis.request") is print
    finally:
        internals.replace("schemathesis.request", original)


def test_no_module_of_the_kit_reaches_an_internal_by_itself() -> None:
    """The registry is the one place: an import of a private module or name elsewhere is a new,
    unlisted use that an upgrade could break unnoticed."""
    private = re.compile(
        r"^\s*(from|import) (schemathesis\.(core|engine|specs|transport)|hypothesis\.internal|urllib3)\b"
        r"|\b(schemathesis|checks|transport|providers)\._[a-z]",
        re.M,
    )
    offenders = [
        f"{path.relative_to(REPO)}:{text[: m.start()].count(chr(10)) + 1}"
        for folder in ("conformance", "specs", "mockserver")
        for path in sorted((REPO / folder).rglob("*.py"))
        if path.name != "internals.py"
        for text in [path.read_text(encoding="utf-8")]
        for m in private.finditer(text)
    ]
    assert not offenders, f"library internals reached outside conformance/check/internals.py: {offenders}"
