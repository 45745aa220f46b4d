"""``python -m conformance client`` as a user runs it: the list, usage errors (exit 2), the reports
every run writes, and the exit code: 0 when every MUST client requirement passed, 1 otherwise."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import pytest

from conformance.cli.commands import main
from conformance.client.cli import settings
from conformance.client.examples.catalogue import CLIENTS

AP = [sys.executable, "-m", CLIENTS["agent-protocol"]]


def test_list_names_each_scenario_what_it_asks_and_what_it_decides(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["client", "--protocol", "synapse-agent", "--list"]) == 0
    out = capsys.readouterr().out
    assert "job-poll\n  the mock: keeps every chat job PROCESSING" in out
    assert "decides: SYN-CLIENT-001, SYN-CLIENT-011, SYN-CLIENT-012" in out
    assert "SYN-CLIENT-005   SHOULD document" in out and "RFC 9110 §15.5.2" in out


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["--scenario", "nope", "--", *AP], "no agent-protocol scenario nope; choose from list-pages"),
        ([], "give the client's command after --"),
        (["--timeout", "0", "--", *AP], "--timeout must be between 0 and 3600"),
        (["--", "/nonexistent/client"], "cannot run '/nonexistent/client'"),
    ],
)
def test_usage_errors_exit_2_with_one_line(argv: list[str], says: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["client", "--protocol", "agent-protocol", *argv]) == 2
    assert says in capsys.readouterr().err


def test_a_fair_client_passes_and_gets_every_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(
        ["client", "--protocol", "agent-protocol", "--scenario", "list-pages", "--report-dir", str(tmp_path), "--", *AP]
    )
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert "ok   agent-protocol list-pages: the client exited 0" in captured.err
    assert "client agent-protocol: PASS" in captured.out
    assert {"results.json", "junit.xml", "report.html", "summary.md"} <= {p.name for p in tmp_path.iterdir()}
    results = json.loads((tmp_path / "results.json").read_text())
    assert {r["id"]: r["status"] for r in results["requirements"]} == {
        "AP-CLIENT-001": "passed",
        "AP-CLIENT-010": "passed",
    }
    assert results["stats"]["scenarios"][0]["exit_code"] == 0


def test_a_broken_must_exits_1_and_a_broken_should_warns(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = ["client", "--protocol", "agent-protocol", "--report-dir", str(tmp_path)]
    assert main([*base, "--scenario", "list-pages", "-v", "--", *AP, "--break", "first-page-only"]) == 1
    err = capsys.readouterr().err
    assert "FAIL agent-protocol list-pages: the client exited 0, 1 request; " in err and "AP-CLIENT-010 failed" in err
    assert "     | page 1: 10 tasks" in err  # -v: what the client printed
    junit = (tmp_path / "junit.xml").read_text()
    assert "AP-CLIENT-010" in junit and "<failure" in junit
    # a SHOULD broken: reported failed, and the run still passes on its MUSTs (as `run` does)
    assert main([*base, "--scenario", "retry-after", "--", *AP, "--break", "ignore-retry-after"]) == 0
    assert "warn agent-protocol retry-after" in capsys.readouterr().err
    results = json.loads((tmp_path / "results.json").read_text())
    assert {r["id"]: r["status"] for r in results["requirements"]}["AP-CLIENT-002"] == "failed"


def test_docs_name_every_scenario_and_every_client_requirement() -> None:
    from conformance.client.requirements import client_requirements
    from conformance.client.scenarios import SCENARIOS

    text = (Path(__file__).parents[3] / "docs" / "client.md").read_text(encoding="utf-8")
    for scenario in SCENARIOS:
        assert f"| {scenario.protocol} | `{scenario.name}` |" in text, scenario.name
    for protocol in sorted(CLIENTS):
        for requirement in client_requirements(protocol):
            number = requirement.id.rsplit("-", 1)[1]
            assert requirement.id in text or f"`*-CLIENT-{number}`" in text, requirement.id


def test_a_baseline_tolerates_a_known_failure_and_names_a_stale_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    known = tmp_path / "expected.yaml"
    known.write_text(
        "expected_failures:\n  - id: AP-CLIENT-010\n    reason: our client reads one page for now\n", encoding="utf-8"
    )
    base = ["client", "--protocol", "agent-protocol", "--scenario", "list-pages", "--report-dir", str(tmp_path / "r")]
    base += ["--expected-failures", str(known), "--", *AP]
    assert main([*base, "--break", "first-page-only"]) == 0
    results = json.loads((tmp_path / "r" / "results.json").read_text())
    assert {r["id"]: r["status"] for r in results["requirements"]}["AP-CLIENT-010"] == "failed"
    assert main(base) == 1  # the fair client passes it: the entry is stale and fails the run
    unknown = tmp_path / "unknown.yaml"
    unknown.write_text("expected_failures:\n  - {id: AP-CLIENT-999, reason: typo}\n", encoding="utf-8")
    capsys.readouterr()
    assert main([*base[:-4], "--expected-failures", str(unknown), "--", *AP]) == 2
    assert "AP-CLIENT-999" in capsys.readouterr().err


def test_conformance_toml_gives_the_command_the_scenarios_and_the_bound(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The client keys of config.py's KEYS, with run's precedence: the protocol's table over the
    top level, the environment over the file, the command line over both."""
    fair = " ".join(AP)
    (tmp_path / "conformance.toml").write_text(
        f'protocol = "agent-protocol"\nclient-scenario = ["list-pages"]\nclient-timeout = 20\n'
        f"[agent-protocol]\nclient-command = '{fair} --break first-page-only'\n",
        encoding="utf-8",
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("CONFORMANCE_CLIENT_SCENARIO", raising=False)
    assert main(["client", "--report-dir", "a"]) == 1  # the file's broken command, its one scenario
    results = json.loads((tmp_path / "a" / "results.json").read_text())
    assert {r["id"]: r["status"] for r in results["requirements"]}["AP-CLIENT-010"] == "failed"
    assert [s["name"] for s in results["stats"]["scenarios"]] == ["list-pages"]
    assert main(["client", "--report-dir", "b", "--", *AP]) == 0  # the command line's command wins
    monkeypatch.setenv("CONFORMANCE_CLIENT_SCENARIO", "unknown-fields, retry-after")
    assert main(["client", "--report-dir", "c", "--", *AP]) == 0
    results = json.loads((tmp_path / "c" / "results.json").read_text())
    assert [s["name"] for s in results["stats"]["scenarios"]] == ["retry-after", "unknown-fields"]
    args = argparse.Namespace(
        protocol=None,
        scenario=None,
        timeout=None,
        seed=None,
        config=None,
        client_command=[],
        report_dir=None,
        expected_failures=None,
    )
    [given] = settings(args, {}, tmp_path)
    assert (given.protocol, given.scenarios, given.timeout_s, given.seed) == ("agent-protocol", ("list-pages",), 20, 0)
    assert given.command == (*AP, "--break", "first-page-only")  # the string split as a shell splits it


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("client-timeout = 0", "client-timeout: must be a number of seconds above 0, at most 3600"),
        ('client-command = ""', "client-command: must be a command: a string or a non-empty list of strings"),
        ("client-command = 'python \"unclosed'", "client-command: must be a command a shell could split"),
        ('protocol = "toy"', "config "),
        ("client-report-dir = 3", "client-report-dir: must be"),
    ],
)
def test_a_wrong_client_key_is_a_usage_error_naming_it(
    text: str, says: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "conformance.toml").write_text(text + "\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    argv = ["client", "--", *AP] if text.startswith("protocol") else ["client", "--protocol", "agent-protocol"]
    assert main(argv) == 2
    assert says in capsys.readouterr().err


def test_the_report_folder_and_the_baseline_come_from_the_file_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """client-report-dir and client-expected-failures, relative to the file; the command line wins."""
    (tmp_path / "known.yaml").write_text(
        "expected_failures:\n  - {id: AP-CLIENT-010, reason: one page for now}\n", encoding="utf-8"
    )
    (tmp_path / "conformance.toml").write_text(
        'protocol = "agent-protocol"\nclient-scenario = ["list-pages"]\nclient-report-dir = "out"\n'
        'client-expected-failures = "known.yaml"\n',
        encoding="utf-8",
    )
    monkeypatch.chdir(tmp_path)
    for name in ("CONFORMANCE_CLIENT_SCENARIO", "CONFORMANCE_CLIENT_REPORT_DIR", "CONFORMANCE_PROTOCOL"):
        monkeypatch.delenv(name, raising=False)
    assert main(["client", "--", *AP, "--break", "first-page-only"]) == 0  # the file's baseline expects it
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    assert {r["id"]: (r["baseline"] or {}).get("verdict") for r in results["requirements"]}[
        "AP-CLIENT-010"
    ] == "expected"
    assert main(["client", "--report-dir", "cli", "--", *AP]) == 1  # passing, the listed entry is stale
    assert (tmp_path / "cli" / "results.json").is_file()


def test_protocol_all_plays_each_protocol_with_its_own_command_into_a_folder_each(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    tables = "".join(
        f"[{protocol}]\nclient-command = {[sys.executable, '-m', module]!r}\n"
        for protocol, module in sorted(CLIENTS.items())
        if protocol != "neuro-san"  # one left without a command: left out, and said so
    )
    (tmp_path / "conformance.toml").write_text(
        f'protocol = "all"\nclient-scenario = ["unknown-fields"]\n{tables}', encoding="utf-8"
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("CONFORMANCE_CLIENT_SCENARIO", raising=False)
    monkeypatch.delenv("CONFORMANCE_PROTOCOL", raising=False)
    assert main(["client", "--report-dir", "all"]) == 0
    captured = capsys.readouterr()
    assert "client neuro-san: left out (no client-command for it)" in captured.err
    assert "client: PASS over 3 protocols" in captured.out
    played = {p.parent.name for p in (tmp_path / "all").glob("*/results.json")}
    assert played == {"agent-protocol", "sgr-agent-core", "synapse-agent"}
    # one broken command for every protocol: each fails its own, and the exit code is the worst
    assert main(["client", "--protocol", "all", "--report-dir", "b", "--", *AP, "--break", "strict-fields"]) == 1
    out = capsys.readouterr().out
    assert "client agent-protocol: FAIL" in out and "client: FAIL over 4 protocols" in out
    # a scenario name no protocol has is a usage error; one some lack is played where it exists
    assert main(["client", "--protocol", "all", "--scenario", "nope", "--", *AP]) == 2
    assert main(["client", "--protocol", "all", "--scenario", "job-poll", "--list"]) == 0
    assert "# synapse-agent\njob-poll" in capsys.readouterr().out
