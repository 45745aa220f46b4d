"""launch.py: the console script re-executes itself with string hashing pinned, and the program
keeps the name it was invoked by across that re-execution; ``judge`` imports the judgments alone."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from conformance.cli.commands import main
from specs.program import __version__

REPO = Path(__file__).resolve().parents[2]

# what the console script's wrapper does: sys.argv[0] is the script, then entry() runs
SCRIPT = (
    "import sys; sys.argv[0] = '/venv/bin/agent-conformance'; from conformance.launch import entry; sys.exit(entry())"
)


def invoke(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if k not in ("PYTHONHASHSEED", "AGENT_CONFORMANCE_PROGRAM")}
    return subprocess.run(
        [sys.executable, "-c", SCRIPT, *args],
        env={**base, "PYTHONPATH": str(REPO), **env},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_version_names_the_console_script_after_the_re_execution() -> None:
    done = invoke("--version")
    assert (done.returncode, done.stdout) == (0, f"agent-conformance {__version__}\n"), done.stderr


def test_a_usage_error_names_the_console_script() -> None:
    done = invoke("run", "--protocol", "nope")
    assert done.returncode == 2
    assert done.stderr.startswith("agent-conformance run: error: argument --protocol")
    assert "(see agent-conformance run --help)" in done.stderr


def test_with_the_hash_seed_given_it_runs_in_place_under_the_same_name() -> None:
    done = invoke("--version", PYTHONHASHSEED="3")
    assert done.stdout == f"agent-conformance {__version__}\n", done.stderr


# a finding's script judges each answer it compares through the console script: that call imports
# the judgments alone, never the whole command line (Hypothesis, httpx, every protocol's suite)
HEAVY = ("conformance.cli.commands", "conformance.run.options", "hypothesis", "httpx")
JUDGE_IN_PLACE = (
    "import sys; sys.argv[0] = '/venv/bin/agent-conformance'; from conformance.launch import entry; code = entry(); "
    f"print('imported:', [m for m in {HEAVY!r} if m in sys.modules], file=sys.stderr); sys.exit(code)"
)


def judge_args(tmp_path: Path, pages: int) -> list[str]:
    body = {
        "tasks": [{"task_id": "t0"}, {"task_id": "t1"}],
        "pagination": {"total_items": 5, "total_pages": pages, "current_page": 1, "page_size": 2},
    }
    (tmp_path / "body").write_text(json.dumps(body))
    url = "http://h/ap/v1/agent/tasks?current_page=1&page_size=2"
    facts = json.dumps({"items": "tasks"})
    return [
        "judge",
        "pages.numbers",
        "--facts",
        facts,
        "--url",
        url,
        "--status",
        "200",
        "--body",
        str(tmp_path / "body"),
    ]


def test_judge_answers_as_the_command_line_does_without_importing_it(tmp_path: Path) -> None:
    base = {k: v for k, v in os.environ.items() if k not in ("PYTHONHASHSEED", "AGENT_CONFORMANCE_PROGRAM")}
    env = {**base, "PYTHONPATH": str(REPO), "PYTHONHASHSEED": "0"}
    for pages, code, said in ((2, 0, "shows: pages.numbers: page 1 of 5 items"), (3, 1, "holds: ")):
        args = judge_args(tmp_path, pages)
        done = subprocess.run([sys.executable, "-c", JUDGE_IN_PLACE, *args], env=env, capture_output=True, text=True)
        assert done.returncode == code and done.stdout.startswith(said), done.stdout + done.stderr
        assert "imported: []" in done.stderr, done.stderr
        assert (main(args), done.stdout) == (code, done.stdout)  # the whole command line's own answer
        again = invoke(*args)  # re-executed with the hash seed pinned first, as a user's shell runs it
        assert (again.returncode, again.stdout) == (code, done.stdout), again.stderr
    wrong = invoke("judge", "pages.numbers", "--url", "u", "--status", "2x")
    assert wrong.returncode == 2
    assert wrong.stderr.startswith("agent-conformance judge: error: argument --status: invalid int value")
    assert "(see agent-conformance judge --help)" in wrong.stderr
    unknown = invoke("judge", "no.such", "--url", "u", "--status", "200")
    assert unknown.returncode == 2 and "no judgment 'no.such'" in unknown.stderr
