"""specs/program.py: the one version, and program names as the user typed them."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

import conformance
from specs.program import __version__, program_name

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    ("argv0", "expected"),
    [
        ("/venv/bin/agent-mock", "agent-mock"),
        ("/venv/bin/agent-conformance", "agent-conformance"),
        ("/checkout/mockserver/__main__.py", "python -m mockserver"),
        ("-c", "python -m mockserver"),
        ("", "python -m mockserver"),
    ],
)
def test_the_program_is_named_as_invoked(argv0: str, expected: str) -> None:
    assert program_name("mockserver", argv0) == expected


def test_the_version_is_written_once_and_the_build_reads_it() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    assert "version" not in project["project"] and project["project"]["dynamic"] == ["version"]
    assert project["tool"]["hatch"]["version"]["path"] == "specs/program.py"
    assert conformance.__version__ == __version__
    assert re.fullmatch(r"\d+\.\d+\.\d+((a|b|rc)\d+)?(\.dev\d+)?", __version__)  # PEP 440, as tags v0.x.y name it


def test_the_changelog_is_in_keep_a_changelog_form_and_knows_this_version() -> None:
    from packaging.version import Version

    text = (REPO / "CHANGELOG.md").read_text(encoding="utf-8")
    assert text.count("\n## [Unreleased]\n") == 1
    released = re.findall(r"^## \[(\d+\.\d+\.\d+)\] - \d{4}-\d{2}-\d{2}$", text, flags=re.M)
    assert released and released == sorted(released, key=Version, reverse=True)
    headings = re.findall(r"^### (.+)$", text, flags=re.M)
    assert set(headings) <= {"Added", "Changed", "Deprecated", "Removed", "Fixed", "Security"}
    if Version(__version__).is_devrelease:  # between releases: the next one is newer than the last
        assert Version(released[0]) < Version(Version(__version__).base_version)
    else:  # a release commit: its section is written
        assert released[0] == __version__
