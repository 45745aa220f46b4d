"""Every ordinary mistake and edge condition, through the real CLI (and the pytest plugin where it
applies): the exit code, no traceback, one line that says what to do, and what the reports say.

One table, one test. A case names its command line, the target it runs against (none, a closed
port, the embedded mock, a hostile server), the exit code, the text stderr must carry, and what
must hold of the report folder afterwards.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from xml.etree import ElementTree as ET

import pytest

from mockserver import EmbeddedServer, MockConfig
from specs.program import __version__
from tests.hostile import closed_port_url
from tests.timing import Clock, Deadline, scaled

REPO = Path(__file__).resolve().parents[2]
BOUND_S = 90.0
STOP_S = 10.0
"""From the signal to the process's exit, reports written (a couple of seconds on a quiet machine)."""


def no_reports(report_dir: Path) -> None:
    assert not report_dir.exists(), "a usage error must refuse before anything is tested or written"


def verdicts(report_dir: Path, protocol: str | None = None) -> dict[str, str]:
    folder = report_dir / protocol if protocol else report_dir
    data = json.loads((folder / "results.json").read_text(encoding="utf-8"))
    return {r["id"]: r["status"] for r in data["requirements"]}


def only_protocol_run(protocol: str) -> Callable[[Path], None]:
    def check(report_dir: Path) -> None:
        assert sorted(p.name for p in report_dir.iterdir()) == [protocol]
        assert set(verdicts(report_dir, protocol)) == {"AP-TASK-001"}

    return check


def results(report_dir: Path, protocol: str | None = None) -> dict[str, Any]:
    folder = report_dir / protocol if protocol else report_dir
    return json.loads((folder / "results.json").read_text(encoding="utf-8"))  # type: ignore[no-any-return]


def junit_cases(report_dir: Path) -> dict[str, ET.Element]:
    root = ET.parse(report_dir / "junit.xml").getroot()
    return {c.get("name", ""): c for c in root.iter("testcase")}


def interrupted_in_schema_phase(report_dir: Path) -> None:
    data = results(report_dir, "agent-protocol")
    assert (data["exit_code"], data["stopped"]) == (130, "interrupted")
    assert all(r["status"] != "passed" for r in data["requirements"])
    schema = [r for r in data["requirements"] if r["phase"] == "schema"]
    assert schema and all(r["message"].startswith("not verified (interrupted)") for r in schema)
    # the protocols after it were not run, and their reports say so: nothing sent, nothing passed
    for later in ("neuro-san", "sgr-agent-core", "synapse-agent"):
        rest = results(report_dir, later)
        assert (rest["exit_code"], rest["stopped"]) == (130, "interrupted")
        assert rest["requirements"] and all(
            r["status"] == "not verified"
            and r["message"].startswith("not verified (interrupted): the run was interrupted during agent-protocol")
            for r in rest["requirements"]
        )
    combined = ET.parse(report_dir / "junit.xml").getroot()  # the combined report holds all four
    suites = {s.get("name") for s in combined.iter("testsuite")}
    assert suites >= {f"conformance.{p}" for p in ("agent-protocol", "neuro-san", "sgr-agent-core", "synapse-agent")}
    cases = junit_cases(report_dir / "agent-protocol")
    assert cases["AP-SCHEMA-001"].find("error") is not None  # a MUST not verified fails in CI too


def interrupted_in_scenarios(report_dir: Path) -> None:
    data = results(report_dir)
    assert (data["exit_code"], data["stopped"]) == (130, "interrupted")
    statuses = [r["status"] for r in data["requirements"]]
    assert "passed" in statuses  # what finished before the signal keeps its verdict
    assert any(r["message"].startswith("not verified (interrupted)") for r in data["requirements"])


def budget_cut(report_dir: Path) -> None:
    data = results(report_dir)
    assert data["exit_code"] == 1 and data["stopped"] == "budget"
    schema = [r for r in data["requirements"] if r["phase"] == "schema"]
    assert schema and all(r["status"] != "passed" for r in schema)  # a phase cut short never reads passed
    # the model phase runs on its own share of what is left: it may finish (and pass) or be cut,
    # but a cut one never reads passed
    model = [r for r in data["requirements"] if r["phase"] == "model"]
    cut = [r for r in model if "budget" in r["message"]]
    assert model and all(r["status"] != "passed" for r in cut)
    assert not cut or all(r["status"] != "passed" for r in model)
    assert any("not verified (budget)" in r["message"] for r in data["requirements"])


def should_failure_is_not_a_junit_failure(report_dir: Path) -> None:
    assert verdicts(report_dir) == {"AP-TASK-001": "passed", "AP-PAGE-004": "failed"}
    root = ET.parse(report_dir / "junit.xml").getroot()
    assert (root.get("failures"), root.get("errors")) == ("0", "0")
    cases = junit_cases(report_dir)
    assert set(cases) == {"AP-TASK-001", "AP-PAGE-004"}  # named by id, classname the protocol
    assert {c.get("classname") for c in cases.values()} == {"agent-protocol"}
    note = cases["AP-PAGE-004"].find("system-out")
    assert note is not None and "SHOULD requirement failed" in (note.text or "")


def advice_is_apart_and_fails_nothing(report_dir: Path) -> None:
    """A practice requirement the target does not follow: advice in every format, counted apart
    from the document's tallies, never a failure."""
    assert verdicts(report_dir) == {"AP-TASK-001": "passed", "AP-ARTIFACT-003": "advice"}
    data = results(report_dir)
    assert data["exit_code"] == 0 and data["advice"]["advice"] == 1
    assert sum(sum(counts.values()) for counts in data["summary"].values()) == 1  # the document's one
    root = ET.parse(report_dir / "junit.xml").getroot()
    assert (root.get("failures"), root.get("errors")) == ("0", "0")
    note = junit_cases(report_dir)["AP-ARTIFACT-003"].find("system-out")
    assert note is not None and (note.text or "").startswith("advice (practice, not the document")
    assert "## Advice: practice, not the document" in (report_dir / "summary.md").read_text()
    assert "id='advice'" in (report_dir / "report.html").read_text()


@dataclass(frozen=True)
class Case:
    name: str
    argv: tuple[str, ...]
    code: int
    says: str
    """A fragment of the one line on stderr (or stdout for ``--version``)."""
    reports: Callable[[Path], None] = no_reports
    target: str = ""
    """``closed`` puts a closed port's URL where ``{url}`` appears in argv; ``mock:P[:FAULT]`` the
    mock's; ``slow:P`` the mock's with every answer 50 ms late (a run no machine finishes in 6 s)."""
    shell: str = ""
    """A shell pipeline instead of argv (``{python}`` is the interpreter)."""
    plugin: tuple[str, ...] = ()
    """The same mistake through the pytest plugin: its arguments (pytest exits 4 on usage errors)."""
    env: dict[str, str] = field(default_factory=dict)
    signal_after: str = ""
    """Send ``signal`` once stderr shows this progress text; the run must end within STOP_S."""
    signal: int = signal.SIGINT


RUN = ("run", "--protocol", "agent-protocol")
CASES = [
    Case(
        "empty-base-url",
        (*RUN, "--base-url", ""),
        2,
        "--base-url is empty (an unset variable?)",
        plugin=("--conformance-protocol", "agent-protocol", "--conformance-base-url", ""),
    ),
    Case(
        "zero-examples",
        (*RUN, "--max-examples", "0"),
        2,
        "--max-examples must be at least 1",
        plugin=("--conformance-protocol", "agent-protocol", "--conformance-max-examples", "0"),
    ),
    Case("negative-examples", (*RUN, "--max-examples", "-1"), 2, "--max-examples must be at least 1"),
    Case("zero-timeout", (*RUN, "--timeout", "0"), 2, "--timeout must be a positive number of seconds"),
    Case("zero-budget", (*RUN, "--budget", "0"), 2, "--budget must be a positive number of seconds"),
    Case("negative-jobs", ("run", "--protocol", "all", "--jobs", "-1"), 2, "--jobs must be 0 (one per core) or more"),
    Case("seed-not-an-integer", (*RUN, "--seed", "x"), 2, "argument --seed: invalid int value: 'x'"),
    Case(
        "only-matches-nothing",
        (*RUN, "--only", "AP-NOPE"),
        2,
        "--only 'AP-NOPE' matches no requirement of agent-protocol",
    ),
    Case(
        "only-leaves-out-other-protocols",
        ("run", "--protocol", "all", "--only", "AP-TASK-001", "--phase", "scenario", "-q"),
        0,
        "",
        reports=only_protocol_run("agent-protocol"),
    ),
    Case(
        "selection-empty",
        (*RUN, "--only", "AP-SCHEMA", "--phase", "scenario"),
        2,
        "no requirement is selected by --only, --level and --phase together",
    ),
    Case(
        "report-dir-unwritable",
        (*RUN, "--report-dir", "/proc/no-such-dir/reports"),
        2,
        "--report-dir '/proc/no-such-dir/reports' is not writable",
    ),
    Case("malformed-url", (*RUN, "--base-url", "http://[::1"), 2, "--base-url 'http://[::1' is not a valid URL"),
    Case("url-without-scheme", (*RUN, "--base-url", "localhost:8000"), 2, "must be an http:// or https:// URL"),
    Case(
        "url-doubles-the-api-root",
        (*RUN, "--base-url", "http://127.0.0.1:9/ap/v1/"),
        2,
        "ends in /ap/v1, which the agent-protocol document's paths already start with "
        "(/ap/v1/agent/tasks); use --base-url http://127.0.0.1:9",
    ),
    Case(
        "url-doubles-the-api-root-ns",
        ("run", "--protocol", "neuro-san", "--base-url", "http://h/x/api/v1"),
        2,
        "use --base-url http://h/x",
    ),
    Case(
        "token-non-ascii",
        (*RUN, "--base-url", "{url}", "--token", "tökén"),
        2,
        "--token contains non-ASCII characters",
        target="closed",
    ),
    Case(
        "token-with-bearer-prefix",
        (*RUN, "--base-url", "{url}", "--token", "Bearer abc"),
        2,
        "--token starts with 'Bearer '; pass the token alone",
        target="closed",
        plugin=("--conformance-protocol", "agent-protocol", "--conformance-token", "Bearer abc"),
    ),
    Case(
        "token-trailing-newline",
        (*RUN, "--second-token", "abc\n"),
        2,
        "--second-token contains whitespace or a control character (a trailing newline from a file?)",
    ),
    Case(
        "auth-protocol-without-token",
        ("run", "--protocol", "synapse-agent", "--base-url", "{url}"),
        2,
        "synapse-agent requires credentials (its document declares bearer auth): pass --token",
        target="closed",
    ),
    Case("plugin-unknown-protocol", (), 4, "", plugin=("--conformance-protocol", "nope")),
    Case("version", ("--version",), 0, f"python -m conformance {__version__}"),
    Case(
        "sigint-in-property-based-phase",
        ("run", "--protocol", "all", "--jobs", "1"),  # one after another (test_parallel.py: in parallel)
        130,
        "interrupted",
        reports=interrupted_in_schema_phase,
        signal_after="schema phase: fuzzing",
    ),
    Case(
        "sigterm-in-scenarios",
        (*RUN, "--base-url", "{url}", "--phase", "scenario"),
        130,
        "interrupted",
        reports=interrupted_in_scenarios,
        # the progress names the requirements that did not pass (not those that did): a fault fails the
        # fourth, so the signal comes after three passed and before the other seventeen are decided
        signal_after="AP-ERR-001",
        signal=signal.SIGTERM,
        target="mock:agent-protocol:ap-404-wrong-shape",
    ),
    Case(
        "budget-cuts-the-property-based-phase",
        (*RUN, "--base-url", "{url}", "--budget", "6"),
        1,
        "",
        reports=budget_cut,
        target="slow:agent-protocol",
    ),
    Case(
        "should-failure-in-a-passing-run",
        (*RUN, "--base-url", "{url}", "--phase", "scenario", "--only", "AP-TASK-001", "--only", "AP-PAGE-004"),
        0,
        "",
        reports=should_failure_is_not_a_junit_failure,
        target="mock:agent-protocol:ap-page-beyond-end-404",
    ),
    Case(
        "advice-in-a-passing-run",
        (*RUN, "--base-url", "{url}", "--phase", "scenario", "--only", "AP-TASK-001", "--only", "AP-ARTIFACT-003"),
        0,
        "",
        reports=advice_is_apart_and_fails_nothing,
        target="mock:agent-protocol:ap-download-no-disposition",
    ),
    Case(
        "wrong-protocol-for-the-target",
        (*RUN, "--base-url", "{url}"),
        2,
        "error: agent-protocol: the target does not speak agent-protocol at ",  # nothing tested: no report
        target="mock:sgr-agent-core",
    ),
    Case("list-faults-into-head", (), 0, "", shell="{python} -m mockserver --list-faults | head -1"),
    Case("requirements-into-head", (), 0, "", shell="{python} -m conformance requirements | head -1"),
]


def _env(case: Case) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(REPO), "PYTHONHASHSEED": "0", **case.env}


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_edge(case: Case, tmp_path: Path) -> None:
    with _target(case.target) as url:
        _run_case(case, tmp_path, url)


@contextmanager
def _target(kind: str) -> Iterator[str]:
    if kind == "closed":
        yield closed_port_url()
    elif kind.startswith("slow:"):
        late = ({"latency": 0.05},)  # a chaos rule: every operation answers 50 ms late
        with EmbeddedServer(MockConfig(protocols=(kind.removeprefix("slow:"),), chaos=late)) as server:
            yield server.url
    elif kind.startswith("mock:"):
        protocol, _, fault = kind.removeprefix("mock:").partition(":")
        with EmbeddedServer(MockConfig(protocols=(protocol,), faults=(fault,) if fault else ())) as server:
            yield server.url
    else:
        yield ""


def _signalled(argv: list[str], case: Case, cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run, wait for the progress text, send the signal; the run must end within STOP_S of it."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "conformance", *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=cwd,
        env=_env(case),
    )
    assert proc.stderr is not None
    seen = []
    deadline = Deadline(BOUND_S)
    for line in proc.stderr:
        seen.append(line)
        if case.signal_after in line or deadline.passed():
            break
    assert case.signal_after in seen[-1], "".join(seen)
    proc.send_signal(case.signal)
    sent = Clock()
    out, err = proc.communicate(timeout=scaled(BOUND_S))
    sent.assert_within(STOP_S, "stopping", cap=BOUND_S / 2)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, "".join(seen) + err)


def _run_case(case: Case, tmp_path: Path, url: str) -> None:
    report_dir = tmp_path / "reports"
    clock = Clock()
    if case.shell:
        proc = subprocess.run(
            case.shell.format(python=sys.executable),
            shell=True,
            capture_output=True,
            text=True,
            timeout=scaled(BOUND_S),
            cwd=tmp_path,
            env=_env(case),
        )
        assert proc.returncode == 0 and proc.stdout.count("\n") == 1, proc.stdout + proc.stderr
        assert proc.stderr == "", proc.stderr
        return
    if case.argv:
        argv = [a.replace("{url}", url) for a in case.argv]
        if "--report-dir" not in argv and argv[0] == "run":
            argv += ["--report-dir", str(report_dir)]
        if case.signal_after:
            proc = _signalled(argv, case, tmp_path)
        else:
            proc = subprocess.run(
                [sys.executable, "-m", "conformance", *argv],
                capture_output=True,
                text=True,
                timeout=scaled(BOUND_S),
                cwd=tmp_path,
                env=_env(case),
            )
        clock.assert_within(BOUND_S, "the command")
        assert "Traceback" not in proc.stderr, proc.stderr
        assert proc.returncode == case.code, proc.stdout + proc.stderr
        if case.code == 2 and case.says:
            [line] = proc.stderr.splitlines()  # one line that says what to do
            assert case.says in line
        elif case.says:
            assert case.says in proc.stdout + proc.stderr
        case.reports(report_dir)
        assert not (tmp_path / ".hypothesis").exists()
    if case.plugin:
        proc = subprocess.run(
            [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *case.plugin],
            capture_output=True,
            text=True,
            timeout=scaled(BOUND_S),
            cwd=tmp_path,
            env=_env(case),
        )
        out = proc.stdout + proc.stderr
        assert proc.returncode == 4, out  # pytest's usage error
        assert "INTERNALERROR" not in out and "Traceback" not in out, out
        assert "ERROR: conformance: " + (case.says or "unknown protocol 'nope'") in out
