"""action.yml: its shell steps run as GitHub would run them (bash -eo pipefail, inputs through the
environment, GITHUB_OUTPUT and GITHUB_STEP_SUMMARY files, each step's ``if:``) against the embedded
reference mock. The ``uses:`` steps (setup-python, the cache, upload-artifact) are GitHub's own:
they are recorded, not run, and give the outputs a test hands them. ``python`` and ``python3`` are
stand-ins that record ``pip install`` and ``venv`` and run the kit from this checkout."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from conformance.verdicts.results import RunResult, Status
from mockserver import EmbeddedServer, MockConfig
from specs.documents import load

REPO = Path(__file__).resolve().parents[1]
ACTION = yaml.safe_load((REPO / "action.yml").read_text(encoding="utf-8"))
EXPRESSION = re.compile(r"\$\{\{\s*(.+?)\s*\}\}")
COMPARISON = re.compile(r"^([a-z0-9_.-]+) (==|!=) '([^']*)'$")
RUN_URL = "https://github.example/owner/repo/actions/runs/42"


@dataclass
class Outcome:
    codes: dict[str, int]
    stdout: dict[str, str]
    outputs: dict[str, str]
    summary: str
    work: Path
    installs: list[str]
    used: dict[str, dict[str, str]]
    """The ``uses:`` steps GitHub would have run, by action, with their ``with:`` as evaluated."""
    action_outputs: dict[str, str]
    """The Action's own ``outputs:``, what a workflow reads as ``steps.<id>.outputs.<name>``."""

    def errors(self) -> list[str]:
        return [line for out in self.stdout.values() for line in out.splitlines() if line.startswith("::error")]

    def annotations(self, kind: str = "error") -> dict[str, str]:
        """title -> message, unescaped, of each ``::kind`` workflow command."""
        found = {}
        for out in self.stdout.values():
            for line in out.splitlines():
                if m := re.match(rf"::{kind} title=([^:]*)::(.*)$", line):
                    found[unescape(m.group(1))] = unescape(m.group(2))
        return found

    def results(self, protocol: str = "") -> RunResult:
        folder = self.work / "conformance-reports" / protocol
        return RunResult.from_dict(json.loads((folder / "results.json").read_text(encoding="utf-8")))


def unescape(text: str) -> str:
    for escaped, char in (("%0A", "\n"), ("%0D", "\r"), ("%3A", ":"), ("%2C", ","), ("%25", "%")):
        text = text.replace(escaped, char)
    return text


SHIM = """#!/bin/sh
if [ "$1 $2" = "-m pip" ]; then echo "$0 $@" >> "{installs}"; exit 0; fi
if [ "$1 $2" = "-m venv" ]; then mkdir -p "$3/bin"; cp "$0" "$3/bin/python"; echo "$0 $@" >> "{installs}"; exit 0; fi
exec "{python}" "$@"
"""


def shim(path: Path, installs: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(SHIM.format(installs=installs, python=sys.executable), encoding="utf-8")
    path.chmod(0o755)
    return path


def run_action(tmp: Path, uses_outputs: dict[str, dict[str, str]] | None = None, **given: str) -> Outcome:
    """Run action.yml's steps in order with a fake GitHub environment."""
    inputs = {name: str(spec.get("default", "")) for name, spec in ACTION["inputs"].items()}
    unknown = set(given) - set(inputs)
    assert not unknown, f"not inputs of action.yml: {unknown}"
    inputs.update(given)
    work, temp = tmp / "workspace", tmp / "runner-temp"
    work.mkdir(parents=True)
    temp.mkdir()
    installs = tmp / "pip-installs"
    # the runner's own python3 (and python); setup-python's, when it runs, is another one
    for name in ("python", "python3"):
        shim(tmp / "bin" / name, installs)
    setup_python = shim(tmp / "hostedtoolcache" / "Python" / "3.11.9" / "bin" / "python", installs)
    uses_outputs = {"python": {"python-path": str(setup_python)}, **(uses_outputs or {})}
    summary = tmp / "summary.md"
    summary.write_text("", encoding="utf-8")
    base_env = {
        "PATH": f"{tmp / 'bin'}{os.pathsep}{os.environ['PATH']}",
        "HOME": str(tmp),
        "PYTHONPATH": str(REPO),
        "GITHUB_ACTIONS": "true",
        "GITHUB_ACTION_PATH": str(REPO),
        "GITHUB_WORKSPACE": str(work),
        "GITHUB_SERVER_URL": "https://github.example",
        "GITHUB_REPOSITORY": "owner/repo",
        "GITHUB_RUN_ID": "42",
        "RUNNER_OS": "Linux",
        "RUNNER_TEMP": str(temp),
        "GITHUB_STEP_SUMMARY": str(summary),
    }
    step_outputs: dict[str, dict[str, str]] = {}
    codes: dict[str, int] = {}
    stdout: dict[str, str] = {}
    used: dict[str, dict[str, str]] = {}
    for n, step in enumerate(ACTION["runs"]["steps"]):
        sid = step.get("id", f"step{n}")

        def expand(value: Any) -> str:
            if isinstance(value, bool):  # YAML's false reaches an action as the string "false"
                return str(value).lower()
            return EXPRESSION.sub(lambda m: _expr(m.group(1), inputs, step_outputs), str(value))

        if not _runs(step.get("if"), failed=any(codes.values()), inputs=inputs, outputs=step_outputs):
            continue
        if "uses" in step:
            used[step["uses"].split("@")[0]] = {k: expand(v) for k, v in step.get("with", {}).items()}
            step_outputs[sid] = dict(uses_outputs.get(sid, {}))
            continue
        env = {k: expand(v) for k, v in step.get("env", {}).items()}
        assert "${{" not in step["run"], f"step {sid} splices an expression into its script"
        script, output = tmp / f"{sid}.sh", tmp / f"{sid}.output"
        script.write_text(step["run"], encoding="utf-8")
        output.write_text("", encoding="utf-8")  # each step gets its own GITHUB_OUTPUT file
        done = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)],
            cwd=work,
            env={**base_env, "GITHUB_OUTPUT": str(output), **env},
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        codes[sid], stdout[sid] = done.returncode, done.stdout + done.stderr
        step_outputs[sid] = dict(
            line.split("=", 1) for line in output.read_text(encoding="utf-8").splitlines() if "=" in line
        )
    return Outcome(
        codes,
        stdout,
        {k: v for outs in step_outputs.values() for k, v in outs.items()},
        summary.read_text(encoding="utf-8"),
        work,
        installs.read_text(encoding="utf-8").splitlines() if installs.exists() else [],
        used,
        {
            name: EXPRESSION.sub(lambda m: _expr(m.group(1), inputs, step_outputs), spec["value"])
            for name, spec in ACTION["outputs"].items()
        },
    )


def _expr(expression: str, inputs: dict[str, str], outputs: dict[str, dict[str, str]]) -> str:
    """The kinds of expression action.yml uses: inputs.NAME, steps.ID.outputs.NAME, runner.os."""
    parts = expression.split(".")
    if parts[0] == "inputs" and len(parts) == 2:
        return inputs[parts[1]]
    if expression == "runner.os":
        return "Linux"
    assert parts[0] == "steps" and len(parts) == 4 and parts[2] == "outputs", expression
    return outputs.get(parts[1], {}).get(parts[3], "")


def _runs(condition: str | None, *, failed: bool, inputs: dict[str, str], outputs: dict[str, dict[str, str]]) -> bool:
    """A step's ``if:`` as GitHub decides it: without a status function, only while nothing failed."""
    if condition == "always()":
        return True
    if condition is None:
        return not failed
    m = COMPARISON.match(condition)
    assert m, f"the test does not know the condition {condition!r}"
    value = _expr(m.group(1), inputs, outputs)
    return not failed and (value == m.group(3)) == (m.group(2) == "==")


@pytest.fixture(scope="module")
def broken_url() -> Iterator[str]:
    with EmbeddedServer(MockConfig(protocols=("agent-protocol",), faults=("ap-task-missing-id",))) as server:
        yield server.url + load("agent-protocol").info.base_path


ARGS = "--only AP-TASK- --phase scenario"


def test_a_failing_target_fails_the_job_with_one_annotation_per_requirement_that_fails_it(
    tmp_path: Path, broken_url: str
) -> None:
    artifact = "https://github.example/owner/repo/actions/runs/42/artifacts/7"
    outcome = run_action(
        tmp_path,
        {"upload": {"artifact-url": artifact}},
        protocol="agent-protocol",
        **{"base-url": broken_url},
        args=ARGS,
    )
    venv = tmp_path / "runner-temp" / "agent-conformance"
    assert outcome.installs[-1] == f"{venv}/bin/python -m pip install --disable-pip-version-check -q {REPO}"
    assert outcome.codes["run"] == 0  # the verdict is held back so that the upload and the report still happen
    assert outcome.outputs["exit-code"] == "1"
    assert outcome.codes["report"] == 0 and outcome.codes["verdict"] == 1
    assert "# Conformance: agent-protocol - FAIL" in outcome.summary and artifact in outcome.summary
    run = outcome.results()
    statuses = {r.status for r in run.failing}
    assert Status.FAILED in statuses and Status.BLOCKED in statuses  # the fault is seen, and what it blocks
    annotations = outcome.annotations()
    assert sorted(annotations) == sorted(f"{r.requirement.id} (MUST) {r.verdict}" for r in run.failing)
    for r in run.failing:
        statement, message, link = annotations[f"{r.requirement.id} (MUST) {r.verdict}"].split("\n")
        assert (statement, link) == (r.requirement.statement, f"Reports: {artifact}")
        assert message == r.message[:1000] + (" [...]" if len(r.message) > 1000 else "")
    assert (outcome.work / "conformance-reports" / "events.jsonl").stat().st_size > 0


def test_a_baseline_listing_the_failures_passes_the_job_without_annotations(tmp_path: Path, broken_url: str) -> None:
    first = run_action(tmp_path / "a", protocol="agent-protocol", **{"base-url": broken_url}, args=ARGS)
    (tmp_path / "b").mkdir()
    baseline = tmp_path / "b" / "known.yaml"
    failed = [r.requirement.id for r in first.results().results if r.status is Status.FAILED]
    entries = [{"id": rid, "reason": "vendor issue 12"} for rid in failed]
    baseline.write_text(yaml.safe_dump({"expected_failures": entries}), encoding="utf-8")
    outcome = run_action(
        tmp_path / "b", protocol="agent-protocol", **{"base-url": broken_url}, args=ARGS, baseline=str(baseline)
    )
    assert outcome.outputs["exit-code"] == "0" and outcome.codes["verdict"] == 0
    assert outcome.errors() == []
    assert "expected fail" in outcome.summary
    assert RUN_URL in outcome.summary  # no artifact URL came back: the run's page is the link


def test_a_stale_entry_is_annotated_and_fails_the_job(tmp_path: Path) -> None:
    tmp_path.joinpath("known.yaml").write_text(
        "expected_failures:\n  - {id: AP-TASK-001, reason: was broken}\n", encoding="utf-8"
    )
    outcome = run_action(
        tmp_path,
        protocol="agent-protocol",
        args="--only AP-TASK-001 --phase scenario",
        baseline=str(tmp_path / "known.yaml"),
    )  # the embedded mock passes it
    assert outcome.codes["verdict"] == 1
    assert [e.split("::")[1] for e in outcome.errors()] == ["error title=AP-TASK-001 (MUST) stale"]


def test_protocol_all_writes_each_protocols_summary_once_and_the_combined_verdict(tmp_path: Path) -> None:
    only = ("AP-TASK-001", "NS-CONN-001", "SGR-MODEL-001", "SYN-SESS-001")
    outcome = run_action(
        tmp_path, protocol="all", args=" ".join(f"--only {rid}" for rid in only) + " --phase scenario --jobs 1"
    )
    assert outcome.outputs["exit-code"] == "0", outcome.stdout["run"][-3000:]
    assert outcome.summary.count("# Conformance: every protocol") == 1
    for protocol in ("agent-protocol", "neuro-san", "sgr-agent-core", "synapse-agent"):
        assert outcome.summary.count(f"## Conformance: {protocol} - PASS") == 1, protocol
        assert outcome.results(protocol).exit_code == 0
    assert outcome.errors() == []


def test_args_are_split_as_a_shell_splits_words_and_never_run(tmp_path: Path) -> None:
    args = f"{ARGS} --target-name \"My Server\" --target-version '$(touch pwned) `touch pwned2`; touch pwned3'"
    outcome = run_action(tmp_path, protocol="agent-protocol", args=args)
    assert not any((outcome.work / name).exists() for name in ("pwned", "pwned2", "pwned3"))
    assert outcome.outputs["exit-code"] == "0", outcome.stdout["run"][-3000:]
    meta = outcome.results().meta
    assert (meta["target_name"], meta["target_version"]) == ("My Server", "$(touch pwned) `touch pwned2`; touch pwned3")


def test_args_a_shell_could_not_split_are_a_usage_error_with_an_annotation(tmp_path: Path) -> None:
    outcome = run_action(tmp_path, protocol="agent-protocol", args='--target-name "My Server')
    assert outcome.outputs["exit-code"] == "2" and outcome.codes["verdict"] == 2
    assert "the args input cannot be split into words as a shell would: No closing quotation" in outcome.stdout["run"]
    assert list(outcome.annotations()) == ["conformance: no report"]


def test_inputs_cannot_inject_shell_and_a_usage_error_still_writes_a_summary(tmp_path: Path) -> None:
    outcome = run_action(tmp_path, protocol="agent-protocol", token="$(touch pwned) `touch pwned2`", args=ARGS)
    assert not any((outcome.work / name).exists() for name in ("pwned", "pwned2"))
    assert outcome.outputs["exit-code"] == "2" and outcome.codes["verdict"] == 2
    assert "no report was written" in outcome.summary
    assert "::add-mask::$(touch pwned)" in outcome.stdout["run"]  # the token is masked in the log


def test_python_version_sets_up_a_python_for_the_kit_alone(tmp_path: Path) -> None:
    outcome = run_action(tmp_path, protocol="agent-protocol", args="--only AP-TASK-001 --phase scenario")
    setup = outcome.used["actions/setup-python"]
    assert setup == {"python-version": "3.11", "update-environment": "false"}  # the job's python stays
    made_from = tmp_path / "hostedtoolcache" / "Python" / "3.11.9" / "bin" / "python"
    assert outcome.installs[0] == f"{made_from} -m venv {tmp_path / 'runner-temp' / 'agent-conformance'}"
    assert outcome.outputs["exit-code"] == "0"


def test_an_empty_python_version_uses_the_runners_python3(tmp_path: Path) -> None:
    outcome = run_action(
        tmp_path, protocol="agent-protocol", args="--only AP-TASK-001 --phase scenario", **{"python-version": ""}
    )
    assert "actions/setup-python" not in outcome.used
    assert (
        outcome.installs[0]
        == f"{tmp_path / 'bin' / 'python3'} -m venv {tmp_path / 'runner-temp' / 'agent-conformance'}"
    )
    assert outcome.outputs["exit-code"] == "0"


def test_pip_downloads_are_cached_per_python_and_kit_and_saved_before_the_run(tmp_path: Path) -> None:
    miss = run_action(tmp_path / "a", protocol="agent-protocol", args="--only AP-TASK-001 --phase scenario")
    restore, save = miss.used["actions/cache/restore"], miss.used["actions/cache/save"]
    assert restore["path"] == save["path"] == str(tmp_path / "a" / ".cache" / "agent-conformance-pip")
    assert (
        re.fullmatch(r"agent-conformance-pip-Linux-py3\.\d+-[0-9a-f]{16}", restore["key"])
        and save["key"] == restore["key"]
    )
    assert restore["restore-keys"] == "agent-conformance-pip-Linux-"
    assert miss.outputs["key"] == restore["key"]
    steps = [step.get("id") for step in ACTION["runs"]["steps"]]
    assert steps.index("cache-save") < steps.index("run")  # kept even when the run fails the job
    hit = run_action(
        tmp_path / "b", {"cache": {"cache-hit": "true"}}, protocol="agent-protocol", args="--only AP-TASK-001"
    )
    assert "actions/cache/save" not in hit.used


def test_the_action_uploads_the_report_dir_before_it_reports() -> None:
    steps = ACTION["runs"]["steps"]
    uses = {step["uses"].split("@")[0]: step for step in steps if "uses" in step}
    assert set(uses) == {
        "actions/setup-python",
        "actions/cache/restore",
        "actions/cache/save",
        "actions/upload-artifact",
    }
    assert uses["actions/upload-artifact"]["with"]["path"] == "${{ inputs.report-dir }}"
    assert uses["actions/upload-artifact"]["if"] == "always()"
    ids = [step.get("id") for step in steps]
    assert ids.index("upload") < ids.index("report")  # the annotations link the uploaded reports


# --- the repository's own workflow -------------------------------------------------------------

WORKFLOWS = sorted((REPO / ".github" / "workflows").glob("*.yml"))


def action_steps() -> list[tuple[str, dict[str, str], list[dict[str, Any]]]]:
    """(job name and matrix values, the with: of its ``uses: ./`` step, the steps after it)."""
    found = []
    for path in WORKFLOWS:
        for name, job in yaml.safe_load(path.read_text(encoding="utf-8"))["jobs"].items():
            matrix = job.get("strategy", {}).get("matrix", {})
            axes = [[(key, str(v)) for v in values] for key, values in matrix.items()] or [[]]
            combinations: list[list[tuple[str, str]]] = [[]]
            for axis in axes:
                combinations = [[*c, pair] for c in combinations for pair in axis] if axis else combinations
            for combination in combinations:
                values = dict(combination)
                steps = job["steps"]
                uses = [i for i, s in enumerate(steps) if s.get("uses") == "./"]
                if not uses:
                    continue  # a job that does not run the Action (the release workflow's build and publish)
                [at] = uses

                def fill(value: Any, values: dict[str, str] = values) -> str:
                    return re.sub(
                        r"\$\{\{\s*matrix\.([a-z-]+)(?:\s*\|\|\s*'([^']*)')?\s*\}\}",
                        lambda m: values[m.group(1)] or (m.group(2) or ""),
                        str(value),
                    )

                with_ = {k: fill(v) for k, v in steps[at].get("with", {}).items()}
                found.append((f"{path.name}:{name}{values}", with_, steps[at + 1 :]))
    return found


def test_the_repository_has_a_workflow_that_runs_the_action_on_the_embedded_mock() -> None:
    runs = action_steps()
    assert runs, "no workflow step uses the Action (uses: ./)"
    assert all("base-url" not in with_ for _, with_, _ in runs)  # the embedded mock
    assert {with_.get("python-version") for _, with_, _ in runs} >= {"", "3.11"}


@pytest.mark.slow
@pytest.mark.parametrize(("name", "with_", "after"), action_steps(), ids=[name for name, _, _ in action_steps()])
def test_the_workflows_action_steps_pass_on_the_embedded_mock(
    tmp_path: Path, name: str, with_: dict[str, str], after: list[dict[str, Any]]
) -> None:
    outcome = run_action(tmp_path, **with_)
    assert outcome.outputs["exit-code"] == "0", outcome.stdout.get("run", "")[-3000:]
    assert outcome.codes["verdict"] == 0 and outcome.errors() == []
    for step in after:  # the workflow's own checks of the Action's outputs
        env = {
            k: re.sub(
                r"\$\{\{\s*steps\.[a-z-]+\.outputs\.([a-z-]+)\s*\}\}", lambda m: outcome.action_outputs[m.group(1)], v
            )
            for k, v in step.get("env", {}).items()
        }
        assert "${{" not in step["run"]
        done = subprocess.run(
            ["bash", "-eo", "pipefail", "-c", step["run"]],
            cwd=outcome.work,
            env={**os.environ, **env},
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert done.returncode == 0, done.stdout + done.stderr


# --- the documentation's CI examples -------------------------------------------------------------


def test_the_docs_pin_the_action_and_the_package_to_this_repository_at_main_or_a_tagged_release() -> None:
    import tomllib

    from tests.test_docs import released_versions

    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    repository = project["urls"]["Source"].removeprefix("https://github.com/")
    # no release is tagged yet (CHANGELOG.md): main, until one is, then that release's tag
    tagged = {f"v{version}" for version in released_versions((REPO / "CHANGELOG.md").read_text(encoding="utf-8"))}
    for page in (REPO / "README.md", REPO / "docs" / "ci.md"):
        text = page.read_text(encoding="utf-8")
        pins = [m for m in re.findall(r"uses: ([\w.-]+/[\w.-]+)@(\S+)", text) if not m[0].startswith("actions/")]
        pins += re.findall(r"git\+https://github\.com/([\w.-]+/[\w.-]+)@([\w.-]+)", text)
        assert pins and {name for name, _ in pins} == {repository}, page.name
        assert {ref for _, ref in pins} <= {"main", *tagged}, page.name
        for block in re.findall(r"```yaml\n(.*?)```", text, flags=re.S):
            for step in yaml.safe_load(block) if block.lstrip().startswith("- uses:") else []:
                assert set(step.get("with", {})) <= set(ACTION["inputs"]), page.name


def _ci_page_block(marker: str) -> Any:
    page = (REPO / "docs" / "ci.md").read_text(encoding="utf-8")
    blocks = [b.split("```", 1)[0] for b in page.split("```yaml\n")[1:]]
    [block] = [b for b in blocks if marker in b]
    return yaml.safe_load(block)


VENDORED = "tools/agent-conformance"
"""Where the workflows of docs/ci.md expect the kit inside the user's repository."""


def test_the_ci_pages_workflow_runs_the_vendored_kit_and_passes_only_inputs_the_action_has(tmp_path: Path) -> None:
    workflow = _ci_page_block("  conformance:\n    runs-on: ubuntu-latest")
    checkout, step = workflow["jobs"]["conformance"]["steps"]
    assert checkout["uses"].startswith("actions/checkout@") and checkout["with"]["submodules"] is True
    assert step["uses"] == f"./{VENDORED}"  # a local action: no hosting address to fill in
    assert set(step["with"]) <= set(ACTION["inputs"])
    # the user's checkout with the kit vendored where the workflow looks: GitHub reads action.yml there
    (tmp_path / VENDORED).parent.mkdir(parents=True)
    (tmp_path / VENDORED).symlink_to(REPO, target_is_directory=True)
    assert yaml.safe_load((tmp_path / step["uses"] / "action.yml").read_text(encoding="utf-8")) == ACTION


def test_the_ci_pages_gitlab_job_is_a_valid_command_line_and_its_junit_is_written_where_it_looks() -> None:
    from conformance.cli.commands import parser

    job = _ci_page_block("conformance:\n  image: python:3.11")["conformance"]
    assert job["script"][0] == f"pip install ./{VENDORED}" and job["variables"]["GIT_SUBMODULE_STRATEGY"] == "recursive"
    command = next(line for line in job["script"] if line.startswith("python -m conformance "))
    import shlex

    args = parser().parse_args(shlex.split(command.removeprefix("python -m conformance ")))
    assert args.command == "run" and args.protocol == "synapse-agent"
    assert job["artifacts"]["reports"]["junit"] == f"{args.report_dir}/junit.xml"
    assert job["artifacts"]["when"] == "always"  # the reports of a failing run are the ones that matter


def test_mode_client_judges_the_client_command_and_annotates_what_it_broke(tmp_path: Path) -> None:
    from conformance.client.examples.catalogue import CLIENTS

    fair = f"{sys.executable} -m {CLIENTS['agent-protocol']}"
    common = {"mode": "client", "protocol": "agent-protocol", "scenario": "list-pages unknown-fields"}
    outcome = run_action(tmp_path / "fair", **common, **{"client-command": fair})
    assert outcome.outputs["exit-code"] == "0", outcome.stdout["run"][-3000:]
    assert [s["name"] for s in outcome.results().stats["scenarios"]] == ["list-pages", "unknown-fields"]
    assert outcome.errors() == [] and "# Conformance: agent-protocol - PASS" in outcome.summary
    broken = run_action(tmp_path / "broken", **common, **{"client-command": f"{fair} --break first-page-only"})
    assert broken.outputs["exit-code"] == "1" and broken.codes["verdict"] == 1
    assert [title.split(" ")[0] for title in broken.annotations()] == ["AP-CLIENT-010"]


def test_mode_client_takes_the_command_from_the_config_file_and_never_runs_it_through_a_shell(
    tmp_path: Path,
) -> None:
    from conformance.client.examples.catalogue import CLIENTS

    (tmp_path / "workspace").mkdir()
    (tmp_path / "conformance.toml").write_text(
        f'protocol = "agent-protocol"\nclient-scenario = ["unknown-fields"]\n'
        f"client-command = '{sys.executable} -m {CLIENTS['agent-protocol']}'\n",
        encoding="utf-8",
    )
    outcome = run_action(tmp_path / "a", mode="client", config=str(tmp_path / "conformance.toml"))
    assert outcome.outputs["exit-code"] == "0", outcome.stdout["run"][-3000:]
    # a command whose words a shell would expand: each reaches the client as it is written
    hostile = run_action(
        tmp_path / "b",
        mode="client",
        protocol="agent-protocol",
        **{"client-command": "true '$(touch pwned)' `touch pwned2`"},
    )
    assert not any((tmp_path / "b" / "workspace" / name).exists() for name in ("pwned", "pwned2"))
    assert hostile.outputs["exit-code"] == "1"  # `true` exits 0 without a request: the tasks were not done


def test_mode_client_refuses_an_unknown_mode_and_a_command_a_shell_could_not_split(tmp_path: Path) -> None:
    unknown = run_action(tmp_path / "a", mode="serve", protocol="agent-protocol")
    assert unknown.outputs["exit-code"] == "2" and unknown.codes["verdict"] == 2
    assert "the mode input is 'run' or 'client', not 'serve'" in unknown.stdout["run"]
    unsplit = run_action(tmp_path / "b", mode="client", protocol="agent-protocol", **{"client-command": 'python "x'})
    assert unsplit.outputs["exit-code"] == "2"
    assert "the client-command input cannot be split into words as a shell would" in unsplit.stdout["run"]
