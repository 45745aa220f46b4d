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


def test_a_reaped_launcher_is_counted_once(tmp_path: Path) -> None:
    """Once reaped, the launcher's CPU (its import and its runs') is the children's count of this
    process: ``cpu_spent`` gives back what it held (a session's last test was charged ~60 s of
    CPU it never spent, the whole launcher twice, when the session's launcher was reaped)."""
    import resource

    def counted() -> float:
        usage = resource.getrusage(resource.RUSAGE_CHILDREN)
        return usage.ru_utime + usage.ru_stime + cpu_spent()

    spent = cpu_spent()
    launcher = WarmCli()
    assert launcher.run(["--version"], tmp_path).returncode == 0
    held, before = cpu_spent() - spent, counted()
    assert held > 0.5  # its import, at the least
    launcher.close()
    assert counted() - before < held / 2  # what the launcher spent past its last report: not held again
