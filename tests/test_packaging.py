"""The wheel the GitHub Action installs (``pip install $GITHUB_ACTION_PATH``, not editable) carries
everything a run needs: the documents, the events schema, both halves, the console scripts.

The wheel is built from the checkout, unpacked and put first on the path of a process whose working
directory is elsewhere, so nothing can be found through the checkout."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def unpacked_wheel(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    out = tmp_path_factory.mktemp("wheel")
    # --no-build-isolation: the build backend (hatchling) is a dev dependency, so no index is needed
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", str(REPO), "-w", str(out)],
        check=True,
        timeout=300,
        capture_output=True,
    )
    (wheel,) = out.glob("*.whl")
    site = out / "site"
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(site)
    yield site


def run_from_wheel(site: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CONFORMANCE_", "PYTHON"))}
    # -P keeps the working directory off sys.path; PYTHONPATH puts the wheel before the checkout's
    # editable install
    env["PYTHONPATH"] = str(site)
    return subprocess.run(
        [sys.executable, "-P", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=600, check=False
    )


def test_the_wheel_holds_every_document_of_the_checkout(unpacked_wheel: Path) -> None:
    documents = {p.relative_to(REPO / "specs") for p in (REPO / "specs").rglob("*") if p.suffix in {".json", ".yaml"}}
    packaged = {p.relative_to(unpacked_wheel / "specs") for p in (unpacked_wheel / "specs").rglob("*")}
    assert documents and documents <= packaged
    assert (unpacked_wheel / "conformance" / "events.schema.json").is_file()
    (dist_info,) = unpacked_wheel.glob("*.dist-info")
    entry_points = (dist_info / "entry_points.txt").read_text(encoding="utf-8")
    assert "agent-conformance = conformance.launch:entry" in entry_points
    assert "agent-mock = mockserver.__main__:main" in entry_points


def test_a_run_from_the_installed_wheel_tests_every_protocol_against_its_embedded_mock(
    unpacked_wheel: Path, tmp_path: Path
) -> None:
    probe = run_from_wheel(
        unpacked_wheel, tmp_path, "-c", "import specs, conformance, mockserver; print(conformance.__file__)"
    )
    assert probe.returncode == 0, probe.stderr
    assert Path(probe.stdout.strip()).is_relative_to(unpacked_wheel), "the checkout, not the wheel, was imported"

    done = run_from_wheel(
        unpacked_wheel,
        tmp_path,
        "-m",
        "conformance",
        "run",
        "--protocol",
        "all",
        # enough cases that a generated NeuroSan chat names the discovered agent (fewer may
        # honestly leave a schema requirement not verified: no case reached its operation)
        "--max-examples",
        "10",
        "--report-dir",
        str(tmp_path / "reports"),
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "Traceback" not in done.stdout + done.stderr
    for protocol in ("agent-protocol", "neuro-san", "sgr-agent-core", "synapse-agent"):
        results = json.loads((tmp_path / "reports" / protocol / "results.json").read_text(encoding="utf-8"))
        statuses = {r["status"] for r in results["requirements"]}
        assert "passed" in statuses and statuses <= {"passed", "skipped"}, (protocol, statuses)


def test_pip_check_passes_in_the_environment_the_tests_run_in() -> None:
    """Every installed distribution's requirements hold (a user's CI may gate on it); clients whose
    pins cannot share this environment run from venvs of their own (tests/interop/peers.py)."""
    done = subprocess.run(
        [sys.executable, "-m", "pip", "check"], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
