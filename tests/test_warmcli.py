"""tests/warmcli.py: a run forked from the warm launcher is the command's own (exit code, stdout,
stderr, working directory), can be killed, and its CPU is counted."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from specs.program import __version__
from tests.hostile import HostileServer
from tests.warmcli import WarmCli, cpu_spent


@pytest.fixture(scope="module")
def cli() -> Iterator[WarmCli]:
    launcher = WarmCli()
    yield launcher
    launcher.close()


def test_a_run_answers_as_the_command_does_in_its_own_folder(cli: WarmCli, tmp_path: Path) -> None:
    before = cpu_spent()
    version = cli.run(["--version"], tmp_path)
    assert (version.returncode, version.stdout) == (0, f"python -m conformance {__version__}\n"), version.stderr
    wrong = cli.run(["run", "--protocol", "nope"], tmp_path)
    assert wrong.returncode == 2 and wrong.stdout == ""
    assert wrong.stderr.startswith("python -m conformance run: error: argument --protocol"), wrong.stderr
    made = cli.run(["keygen", "--out", "lab"], tmp_path)
    assert made.returncode == 0 and (tmp_path / "lab.key").is_file(), made.stderr  # relative to its cwd
    assert cpu_spent() > before  # the runs' CPU reaches this process's count


def test_a_run_past_its_bound_is_killed(cli: WarmCli, tmp_path: Path) -> None:
    with HostileServer("stall_headers") as url:
        running = cli.start(["run", "--protocol", "neuro-san", "--base-url", url, "--timeout", "60"], tmp_path)
        with pytest.raises(TimeoutError):
            running.wait(1)
        running.kill()
        assert running.wait(30).returncode == -9
