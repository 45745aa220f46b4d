"""The README is a front door: short, and every page of docs/ reachable from it; no link in the
README or docs/ points at a file or a section that does not exist."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PAGES = sorted((REPO / "docs").glob("*.md"))
LINK = re.compile(r"\]\(([^)\s]+)\)")


def _anchor(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def _anchors(page: Path) -> set[str]:
    text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.S)  # a '#' in code is no heading
    return {_anchor(m.group(1)) for m in re.finditer(r"^#+ (.+)$", text, flags=re.M)}


def test_the_readme_is_short_and_links_every_page_of_docs() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) < 150
    linked = {target for target in LINK.findall(readme)}
    assert PAGES and {f"docs/{page.name}" for page in PAGES} <= linked


@pytest.mark.parametrize("page", [REPO / "README.md", *PAGES], ids=lambda p: p.relative_to(REPO).as_posix())
def test_every_relative_link_resolves(page: Path) -> None:
    for target in LINK.findall(page.read_text(encoding="utf-8")):
        if re.match(r"[a-z]+:", target):
            continue  # a URL
        path, _, anchor = target.partition("#")
        linked = (page.parent / path).resolve() if path else page
        assert linked.exists(), f"{page.name}: {target}"
        if anchor and linked.suffix == ".md":
            assert anchor in _anchors(linked), f"{page.name}: {target}"


PIN = re.compile(r"agent-(?:api-)?conformance(?:\.git)?@v?(\d+\.\d+\.\d+)\b")
"""A pin of this kit (the Action's ``uses:``, a ``git+`` install), not of a peer (``agent-protocol@1.0.5``)."""


def released_versions(changelog: str) -> set[str]:
    """The versions CHANGELOG.md gives a release heading (``## [X.Y.Z] - date``) whose notes do not
    say it was never tagged: a pin can name only those."""
    sections = re.split(r"^## ", changelog, flags=re.M)[1:]
    heads = (re.match(r"\[(\d+\.\d+\.\d+)\] - \d{4}-\d{2}-\d{2}", s) for s in sections)
    return {h.group(1) for h, s in zip(heads, sections, strict=True) if h and "never tagged" not in s}


def test_a_pin_is_the_kits_not_a_peers() -> None:
    text = "uses: agent-api-conformance/agent-api-conformance@v0.3.0; npm install agent-protocol@1.0.5"
    assert PIN.findall(text) == ["0.3.0"]


def test_released_versions_reads_the_headings_and_skips_untagged_ones() -> None:
    changelog = "## [Unreleased]\n## [0.3.0] - 2027-01-02\nx\n## [0.2.0] - 2027-01-01\nIt was never tagged.\n"
    assert released_versions(changelog) == {"0.3.0"}


@pytest.mark.parametrize("page", [REPO / "README.md", *PAGES], ids=lambda p: p.relative_to(REPO).as_posix())
def test_every_pinned_version_was_released(page: Path) -> None:
    """``uses: ...@vX.Y.Z`` or ``git+...@vX.Y.Z`` naming a tag that does not exist fails a reader's
    first run; name only a release CHANGELOG.md records (or a branch or commit, said plainly)."""
    released = released_versions((REPO / "CHANGELOG.md").read_text(encoding="utf-8"))
    pinned = set(PIN.findall(page.read_text(encoding="utf-8")))
    assert pinned <= released, f"{page.name} pins {sorted(pinned - released)}; released: {sorted(released)}"


def test_usage_tables_every_run_option_with_its_config_key_and_variable() -> None:
    """docs/usage.md's options table: one row per `run` option, each config key and variable the
    one config.py reads for it (a `-` where the option has none)."""
    from conformance.cli.commands import parser
    from conformance.settings.config import KEYS, env_name

    page = (REPO / "docs" / "usage.md").read_text(encoding="utf-8")
    table = page.split("| option | config key | env var | meaning (default) |\n|---|---|---|---|\n", 1)[1]
    rows = [re.split(r"(?<!\\) \| ", line.strip("| ")) for line in table.split("\n\n", 1)[0].splitlines()]
    documented = {re.findall(r"--[a-z-]+", row[0])[-1]: (row[1], row[2]) for row in rows}
    commands = next(a for a in parser()._actions if isinstance(a, argparse._SubParsersAction))
    run = commands.choices["run"]
    options = {o for action in run._actions for o in action.option_strings if o.startswith("--") and o != "--help"}
    assert set(documented) == options
    by_option = {f"--{key.name}": key for key in KEYS.values()}
    for option, (key, variable) in documented.items():
        known = by_option.get(option)
        expected = (f"`{known.name}`", f"`{env_name(known.name)}`") if known else ("-", "-")
        assert (key, variable) == expected, option
