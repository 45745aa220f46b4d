"""The suite against AutoGPT Forge (autogpt-forge 0.1.4), offline, with a tiny agent writing steps.

Forge does not pin its web stack; it runs from its own venv under ``.peers/`` with the set below,
which installs and runs on Python 3.11 (peers.py; the test is skipped, with pip's error, when it
cannot be built). The agent is ``forge_agent.py``: Forge's own app, database (SQLite) and workspace,
with ``execute_step`` written here (Forge's raises NotImplementedError): a task's first step plans,
the second writes ``output.txt`` as an artifact. No model is called and litellm fetches nothing.
The server listens on 127.0.0.1 only, its database and workspace fresh per start, and is stopped by
its PID.

The verdicts below are a snapshot of what the suite reports about Forge, checked by hand in
docs/interop-autogpt-forge.md: a change in any set means the suite or Forge changed.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from .peers import CliRun, PeerUnavailable, free_port, peer_python, run_suite, serve, skip_reason

pytestmark = [pytest.mark.interop, pytest.mark.timeout(900)]  # a first run builds the peer venv

REQUIREMENTS = (
    "autogpt-forge==0.1.4",
    # unpinned by Forge's metadata; a set that installs and runs on Python 3.11
    "fastapi==0.165.0",
    "starlette==1.10.0",
    "pydantic==2.14.4",
    "SQLAlchemy==2.1.9",
    "uvicorn==0.23.2",
    "python-multipart==0.0.7",
    "litellm==1.80.0",
)
INSTALL_TIMEOUT_S = 600.0
"""About 140 packages: 1.5 min on a cold cache here, up to 3.5 min on a loaded machine."""
AGENT = Path(__file__).with_name("forge_agent.py")

PASSED = {
    "AP-TASK-001",
    "AP-TASK-002",
    "AP-TASK-003",
    "AP-STEP-001",
    "AP-STEP-002",
    "AP-STEP-003",
    "AP-STEP-004",
    "AP-ARTIFACT-005",
    "AP-MODEL-001",
    "AP-MODEL-002",
    "AP-MODEL-005",
    "AP-SCHEMA-008",
}
FAILED = {
    # 404 bodies {"error"}, not {"message"}; lists and uploads of an unknown task answer 200
    "AP-ERR-001",
    "AP-ERR-002",
    "AP-ERR-003",
    # a step POST whose body is JSON null runs a step (input "y"), not a 422
    "AP-ERR-004",
    # relative_path read from the query string, not the form: answered ""
    "AP-ARTIFACT-001",
    "AP-ARTIFACT-002",
    # a file name '../<other task>/victim.txt' overwrites that task's artifact
    "AP-ARTIFACT-006",
    # the lists read page and pageSize, not current_page and page_size
    "AP-PAGE-001",
    "AP-PAGE-002",
    "AP-PAGE-003",
    "AP-PAGE-004",
    "AP-MODEL-003",
    "AP-MODEL-004",
    # the step read has no Content-Type at all
    "AP-SCHEMA-003",
    "AP-SCHEMA-005",
    "AP-SCHEMA-006",
    # a create without input is refused 422
    "AP-SCHEMA-007",
    # a lone surrogate in additional_input is stored, and the task list answers 500 from then on
    "AP-HOSTILE-001",
}
NOT_VERIFIED: set[str] = set()
STATE_DEPENDENT: frozenset[str] = frozenset()
"""None among fresh servers; against a server kept from an earlier run AP-SCHEMA-001 failed once (a
generated download of a non-Latin-1 name), which the report does not name as state-dependent."""
DRAWN = frozenset({"AP-SCHEMA-001"})
"""Passed or failed by the draw: a generated download of an artifact Forge cannot serve answers 500
(docs/interop-autogpt-forge.md shows it by hand, and the targeted checks report it every run);
whether the property-based phase's cases meet one differs between runs against fresh servers with
seed 0 (two full runs of 2026-12-05: passed, then failed on 3 of 370 cases)."""
BLOCKED = frozenset(
    {
        # uploads answered with an earlier upload's id (AP-ARTIFACT-001's), and what lies past the
        # first page of a list that ignores current_page (AP-PAGE-003's)
        "AP-ARTIFACT-004",
    }
)
ADVICE = frozenset(
    {
        # practice: Content-Disposition's file name unquoted
        "AP-ARTIFACT-003",
    }
)


@contextmanager
def forge_server(home: Path) -> Iterator[str]:
    """The agent from Forge's venv, its database and workspace under ``home``; yields its base URL."""
    python = peer_python(*REQUIREMENTS, timeout_s=INSTALL_TIMEOUT_S)
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    with serve(
        [str(python), str(AGENT), str(port), str(home)],
        f"{url}/ap/v1/agent/tasks",
        timeout_s=90,  # importing forge.sdk imports litellm: about 10 s on a quiet machine
        env={"LITELLM_LOCAL_MODEL_COST_MAP": "True", "ANONYMIZED_TELEMETRY": "False"},
        cwd=home,
        log=home / "server.log",
    ):
        yield url


@pytest.fixture(scope="module")
def forge_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("forge")


@pytest.fixture(scope="module")
def forge_url(forge_home: Path) -> Iterator[str]:
    try:
        with forge_server(forge_home) as url:
            yield url
    except PeerUnavailable as exc:
        pytest.skip(skip_reason(exc))


@pytest.fixture(scope="module")
def forge_run(forge_url: str, tmp_path_factory: pytest.TempPathFactory) -> CliRun:
    return run_suite("agent-protocol", forge_url, tmp_path_factory.mktemp("report"))


def test_forge_is_reachable_and_judged(forge_run: CliRun) -> None:
    assert forge_run.fatal is None
    assert forge_run.exit_code == 1  # reachable (not 2), and it fails MUST requirements (see the snapshot)
    assert not forge_run.ids("error"), {rid: forge_run.messages[rid] for rid in forge_run.ids("error")}


def test_what_the_suite_reports_about_forge(forge_run: CliRun) -> None:
    forge_run.assert_verdicts(
        PASSED, FAILED, NOT_VERIFIED, either=STATE_DEPENDENT, blocked=BLOCKED, advice=ADVICE, drawn=DRAWN
    )


def test_the_traversal_check_finds_forges_and_leaves_nothing_outside_its_workspace(
    forge_run: CliRun, forge_home: Path
) -> None:
    """Forge ignores the relative_path field and keeps files by name; it follows '..' in a file
    name as long as the path stays in its workspace, so a file name climbing into another task's
    folder overwrites that task's artifact (AP-ARTIFACT-006 fails on it). Every file the run made
    it write lies in its workspace."""
    assert forge_run.statuses["AP-ARTIFACT-006"] == "failed" and "overwrote it" in forge_run.messages["AP-ARTIFACT-006"]
    assert sorted(p.name for p in forge_home.iterdir()) == ["agent.db", "server.log", "workspace"]
