"""A protocol added from outside the kit: tests/fixtures/toy_protocol is installed only through the
entry-point group ``agent_conformance.protocols`` (a dist-info on the path of a fresh interpreter,
as pip would leave it), and the suite runs against its mock and proves itself with its faults."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from xml.etree import ElementTree

import pytest

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "tests" / "fixtures"

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A site folder holding only the toy package's metadata: what ``pip install`` would write."""
    root = tmp_path_factory.mktemp("site")
    dist = root / "toy_protocol-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: toy-protocol\nVersion: 0.1\n", encoding="utf-8")
    (dist / "entry_points.txt").write_text("[agent_conformance.protocols]\ntoy = toy_protocol\n", encoding="utf-8")
    return root


def run(site: Path, cwd: Path, *args: str, module: str = "conformance") -> subprocess.CompletedProcess[str]:
    """``python -m module args`` in a fresh interpreter that finds the toy package only through
    its entry point (and the kit and its tests as they are)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("CONFORMANCE_")}
    env["PYTHONPATH"] = os.pathsep.join([str(site), str(FIXTURES), str(REPO)])
    return subprocess.run(
        [sys.executable, "-m", module, *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def test_the_toy_protocol_is_discovered_and_listed(site: Path, tmp_path: Path) -> None:
    listed = run(site, tmp_path, "requirements", "--protocol", "toy")
    assert listed.returncode == 0, listed.stderr
    assert "TOY-GREET-001" in listed.stdout
    assert "TOY-SCHEMA-001" in listed.stdout


def test_the_suite_passes_the_toy_mock(site: Path, tmp_path: Path) -> None:
    done = run(site, tmp_path, "run", "--protocol", "toy", "--max-examples", "5", "--report-dir", str(tmp_path / "r"))
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    results = json.loads((tmp_path / "r" / "results.json").read_text(encoding="utf-8"))
    statuses = {r["id"]: r["status"] for r in results["requirements"]}
    assert statuses["TOY-GREET-001"] == "passed"
    assert set(statuses.values()) <= {"passed", "not verified"}, statuses


def test_selfcheck_catches_every_toy_fault(site: Path, tmp_path: Path) -> None:
    done = run(site, tmp_path, "selfcheck", "--protocol", "toy", "--report-dir", str(tmp_path / "sc"))
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "2 of 2 faults caught" in done.stdout


GENERIC = {
    "tests/mockserver/test_fuzz.py": 1,
    "tests/mockserver/test_limits.py": 1,
    "tests/mockserver/test_chaos.py": 3,
    "tests/mockserver/test_fixtures.py": 1,
    "tests/conformance/run/test_applicability.py": 1,
    "tests/specs/test_errors.py": 5,
}
"""The generic tests that loop over every discovered protocol, and how many of their cases the toy
protocol gets (read from its test facts, tests/fixtures/toy_protocol/facts.py; no table names it)."""


def test_the_generic_tests_cover_the_toy_protocol_without_naming_it(site: Path, tmp_path: Path) -> None:
    report = tmp_path / "junit.xml"
    args = [*GENERIC, "-k", "toy", "-p", "no:cacheprovider", "-q", f"--junitxml={report}"]
    done = run(site, REPO, *args, module="pytest")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    cases = ElementTree.parse(report).getroot().iter("testcase")
    ran: dict[str, int] = {}
    for case in cases:
        assert "toy" in case.get("name", ""), case.get("name")
        verdicts = [child for child in case if child.tag != "properties"]  # properties: its cpu_s (conftest)
        assert not verdicts, f"{case.get('name')}: {[child.tag for child in verdicts]}"  # no failure, error or skip
        module = case.get("classname", "").replace(".", "/") + ".py"
        ran[module] = ran.get(module, 0) + 1
    assert ran == GENERIC
