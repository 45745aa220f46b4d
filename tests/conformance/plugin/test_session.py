"""The pytest plugin: one item per requirement, the verdict of one shared run each.

pytester restores ``sys.modules`` after each test, dropping modules first imported during it
(later imports would then build second copies of classes). Everything in-process happens at
import or in the module-scoped fixture, before pytester takes its snapshot."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from conformance.run.suites import suite
from mockserver import EmbeddedServer, MockConfig

pytestmark = pytest.mark.slow  # each test runs pytest on whole suites (pytester)

pytest_plugins = ["pytester"]

NS_REQUIREMENTS = len(suite("neuro-san").registry)


@pytest.fixture(scope="module")
def context_dropping_mock() -> Iterator[str]:
    """A final answer without its chat_context (document requirements fail) and MINIMAL streaming the
    intermediate messages too (a practice requirement: advice, not a failure)."""
    faults = ("ns-stream-no-context", "ns-minimal-verbose")
    with EmbeddedServer(MockConfig(protocols=("neuro-san",), faults=faults)) as server:
        yield server.url


def test_one_item_per_requirement_passes_against_the_mock(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_own="def test_mine(conformance_run):\n    assert conformance_run.exit_code == 0\n")
    result = pytester.runpytest_subprocess(
        "-p",
        "no:cacheprovider",
        "test_own.py",  # named: without a path the command line asks for the conformance items alone
        "--conformance-protocol",
        "neuro-san",
        "--conformance-max-examples",
        "10",
    )
    result.assert_outcomes(passed=NS_REQUIREMENTS + 1)  # each requirement, and the team's own test


def test_a_broken_server_fails_the_items_of_the_requirements_it_breaks(
    context_dropping_mock: str, pytester: pytest.Pytester
) -> None:
    result = pytester.runpytest_subprocess(
        "-p",
        "no:cacheprovider",
        "--conformance-protocol",
        "neuro-san",
        "--conformance-base-url",
        context_dropping_mock,
        "--conformance-max-examples",
        "10",
        "-rfs",
    )
    # the root failures fail; NS-CTX-002, with no chat_context to send back, is blocked (skipped)
    # (exactly the requirements the faults declare: the model phase's NS-MODEL-002 among them)
    result.stdout.fnmatch_lines(["*FAILED*NS-CTX-001*", "*FAILED*NS-MODEL-002*"])
    result.stdout.fnmatch_lines(["*SKIPPED*blocked by NS-CTX-001*"])
    # MINIMAL's intermediate messages break a practice requirement: advice, reported, never a failure
    result.stdout.fnmatch_lines(["*SKIPPED*advice (practice, not the document) on NS-FILTER-001: *intermediate*"])
    result.stdout.no_fnmatch_line("*FAILED*NS-FILTER-001*")
    outcomes = result.parseoutcomes()
    assert outcomes.get("failed", 0) == 2 and outcomes.get("passed", 0) >= 5


def test_the_reports_are_signed_with_the_sign_key(pytester: pytest.Pytester) -> None:
    """--conformance-sign-key, the run's sign-key option as every face reads it (config.KEYS)."""
    from conformance.cli.commands import main

    keys = pytester.path / "keys"
    keys.mkdir()
    assert main(["keygen", "--out", str(keys / "lab")]) == 0
    out = pytester.path / "reports"
    result = pytester.runpytest_subprocess(
        *("-p", "no:cacheprovider", "--conformance-protocol", "agent-protocol", "--conformance-only", "AP-TASK-001"),
        *("--conformance-report-dir", str(out), "--conformance-sign-key", str(keys / "lab.key")),
    )
    result.assert_outcomes(passed=1)
    assert main(["verify", str(out), "--public-key", str(keys / "lab.pub")]) == 0


def test_the_reports_name_the_requirement_set_scored(pytester: pytest.Pytester) -> None:
    """--conformance-requirements, the run's requirements key as every face reads it (config.KEYS);
    a set the kit does not carry is a usage error before anything runs."""
    out = pytester.path / "reports"
    result = pytester.runpytest_subprocess(
        *("-p", "no:cacheprovider", "--conformance-protocol", "agent-protocol", "--conformance-only", "AP-TASK-001"),
        *("--conformance-report-dir", str(out), "--conformance-requirements", "2026.12"),
    )
    result.assert_outcomes(passed=1)
    assert json.loads((out / "results.json").read_text())["requirement_set"] == "agent-protocol/2026.12"
    refused = pytester.runpytest_subprocess(
        *("-p", "no:cacheprovider", "--conformance-protocol", "agent-protocol", "--conformance-requirements", "1999.01")
    )
    assert refused.ret == pytest.ExitCode.USAGE_ERROR
    refused.stderr.fnmatch_lines(["*no requirement set agent-protocol/1999.01*"])


def test_without_the_option_the_plugin_adds_nothing(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_own="def test_mine():\n    pass\n")
    pytester.runpytest_subprocess("-p", "no:cacheprovider").assert_outcomes(passed=1)


def collected(result: pytest.RunResult) -> list[str]:
    """Item names from ``--collect-only -q`` (requirement items are children of the session)."""
    return sorted(line.removeprefix("::") for line in result.stdout.lines if line.startswith("::"))


def test_protocol_all_only_and_level_markers_select_items(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest_subprocess(
        "-p",
        "no:cacheprovider",
        "--collect-only",
        "-q",
        "--conformance-protocol",
        "all",
        "--conformance-only",
        "AP-TASK-",
        "--conformance-only",
        "NS-ERR-",
        "-m",
        "must",
    )
    ids = sorted(name.rsplit("::", 1)[-1] for name in collected(result))
    must = sorted(
        c.requirement.id
        for pid in ("agent-protocol", "neuro-san")
        for c in suite(pid).registry
        if c.requirement.id.startswith(("AP-TASK-", "NS-ERR-")) and c.requirement.level.value == "must"
    )
    assert ids == must and ids
    assert "agent-protocol::AP-TASK-001" in collected(result)
    should = pytester.runpytest_subprocess(
        "-p",
        "no:cacheprovider",
        "--collect-only",
        "-q",
        "--conformance-protocol",
        "neuro-san",
        "--conformance-only",
        "NS-",
        "-m",
        "should",
    )
    names = collected(should)
    assert names and all(suite("neuro-san").registry.get(n).requirement.level.value == "should" for n in names)


def test_the_config_file_in_the_rootdir_is_used(pytester: pytest.Pytester) -> None:
    pytester.makefile(".toml", conformance='protocol = "agent-protocol"\nonly = ["AP-PAGE-00"]\n')
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--collect-only", "-q")
    assert collected(result) == sorted(
        c.requirement.id for c in suite("agent-protocol").registry if c.requirement.id.startswith("AP-PAGE-00")
    )
    bad = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "--conformance-level", "should", "--conformance-config", "missing.toml"
    )
    assert bad.ret == pytest.ExitCode.USAGE_ERROR
    bad.stderr.fnmatch_lines(["*conformance: config missing.toml: cannot read it*"])


def test_two_xdist_workers_give_the_verdicts_of_one_process(
    context_dropping_mock: str, pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PYTHONHASHSEED", "0")  # both sides draw the same generated cases
    verdicts, cases = {}, {}
    for workers in ("0", "2"):
        out = pytester.path / f"reports-{workers}"
        result = pytester.runpytest_subprocess(
            "-p",
            "no:cacheprovider",
            "-n",
            workers,
            "--conformance-protocol",
            "neuro-san",
            "--conformance-base-url",
            context_dropping_mock,
            "--conformance-max-examples",
            "10",
            "--conformance-report-dir",
            str(out),
            "-v",
        )
        data = json.loads((out / "results.json").read_text(encoding="utf-8"))
        cases[workers] = data["stats"]["schema_cases"]
        if workers == "2":
            lines = "\n".join(result.stdout.lines)
            assert "[gw0]" in lines and "[gw1]" in lines  # both workers took requirements
            # each worker ran its shard of the work (--shard's deal), the property-based phase too
            assert sorted(m.split()[0] for m in data["merged_from"]) == ["1/2", "2/2"]
        verdicts[workers] = {r["id"]: r["status"] for r in data["requirements"]}
        assert set(verdicts[workers]) == {c.requirement.id for c in suite("neuro-san").registry}
        assert data["exit_code"] == 1 and result.ret == pytest.ExitCode.TESTS_FAILED
    assert verdicts["2"] == verdicts["0"]
    assert cases["2"] == cases["0"]  # the shards together sent the one process's cases
    assert verdicts["0"]["NS-CTX-001"] == "failed"  # the fault is seen in both
