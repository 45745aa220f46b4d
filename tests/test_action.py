"""action.yml: its shell steps run as GitHub would run them (bash -eo pipefail, inputs through the
environment, GITHUB_OUTPUT and GITHUB_STEP_SUMMARY files) against the embedded reference mock."""

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

from mockserver import EmbeddedServer, MockConfig
from specs.documents import load

REPO = Path(__file__).resolve().parents[1]
ACTION = yaml.safe_load((REPO / "action.yml").read_text(encoding="utf-8"))
EXPRESSION = re.compile(r"\$\{\{\s*([a-z0-9_.-]+)\s*\}\}")


@dataclass
class Outcome:
    codes: dict[str, int]
    stdout: dict[str, str]
    outputs: dict[str, str]
    summary: str
    work: Path
    installs: list[str]

    def errors(self) -> list[str]:
        return [line for out in self.stdout.values() for line in out.splitlines() if line.startswith("::error")]


def run_action(tmp: Path, **given: str) -> Outcome:
    """Run every ``run:`` step of action.yml in order with a fake GitHub environment; ``uses:``
    steps (setup-python, upload-artifact) are GitHub's own and are not run here."""
    inputs = {name: str(spec.get("default", "")) for name, spec in ACTION["inputs"].items()}
    unknown = set(given) - set(inputs)
    assert not unknown, f"not inputs of action.yml: {unknown}"
    inputs.update(given)
    work, bin_dir = tmp / "workspace", tmp / "bin"
    work.mkdir(parents=True)
    bin_dir.mkdir()
    installs = tmp / "pip-installs"
    # `python -m pip install` is recorded, not run: the kit is already importable from the checkout
    (bin_dir / "python").write_text(
        "#!/bin/sh\n"
        f'if [ "$1 $2" = "-m pip" ]; then echo "$@" >> "{installs}"; exit 0; fi\n'
        f'exec "{sys.executable}" "$@"\n',
        encoding="utf-8",
    )
    (bin_dir / "python").chmod(0o755)
    summary = tmp / "summary.md"
    summary.write_text("", encoding="utf-8")
    base_env = {
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        "HOME": str(tmp),
        "PYTHONPATH": str(REPO),
        "GITHUB_ACTIONS": "true",
        "GITHUB_ACTION_PATH": str(REPO),
        "GITHUB_WORKSPACE": str(work),
        "RUNNER_TEMP": str(tmp),
        "GITHUB_STEP_SUMMARY": str(summary),
    }
    step_outputs: dict[str, dict[str, str]] = {}
    codes: dict[str, int] = {}
    stdout: dict[str, str] = {}
    for n, step in enumerate(ACTION["runs"]["steps"]):
        if "run" not in step:
            continue
        sid = step.get("id", f"step{n}")
        if step.get("if") not in (None, "always()"):
            raise AssertionError(f"the test does not know the condition {step['if']!r}")
        if codes and any(codes.values()) and step.get("if") != "always()":
            continue  # GitHub skips later steps after a failure unless they ask to run always

        env = {
            k: EXPRESSION.sub(lambda m: _expr(m, inputs, step_outputs), str(v)) for k, v in step.get("env", {}).items()
        }
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
    )


def _expr(m: re.Match[str], inputs: dict[str, str], outputs: dict[str, dict[str, str]]) -> str:
    """The two kinds of expression action.yml uses: inputs.NAME and steps.ID.outputs.NAME."""
    parts = m.group(1).split(".")
    if parts[0] == "inputs" and len(parts) == 2:
        return inputs[parts[1]]
    assert parts[0] == "steps" and len(parts) == 4 and parts[2] == "outputs", m.group(0)
    return outputs.get(parts[1], {}).get(parts[3], "")


@pytest.fixture(scope="module")
def broken_url() -> Iterator[str]:
    with EmbeddedServer(MockConfig(protocols=("agent-protocol",), faults=("ap-task-missing-id",))) as server:
        yield server.url + load("agent-protocol").info.base_path


ARGS = "--only AP-TASK- --phase scenario"


def failed_ids(outcome: Outcome) -> list[str]:
    results: dict[str, Any] = json.loads(
        (outcome.work / "conformance-reports" / "results.json").read_text(encoding="utf-8")
    )
    return [r["id"] for r in results["requirements"] if r["status"] == "failed"]


def test_a_failing_target_fails_the_job_with_one_annotation_per_failed_requirement(
    tmp_path: Path, broken_url: str
) -> None:
    outcome = run_action(tmp_path, protocol="agent-protocol", **{"base-url": broken_url}, args=ARGS)
    assert outcome.installs == [f"-m pip install --disable-pip-version-check -q {REPO}"]
    assert outcome.codes["run"] == 0  # the verdict is held back so the summary and upload still happen
    assert outcome.outputs["exit-code"] == "1"
    assert outcome.codes["summary"] == 0 and outcome.codes["verdict"] == 1
    assert "# Conformance: agent-protocol - FAIL" in outcome.summary
    failed = failed_ids(outcome)
    assert failed  # the fault is seen
    titles = [re.match(r"::error title=([A-Z]+-[A-Z]+-\d{3}) \(MUST\)::", line) for line in outcome.errors()]
    assert sorted(m.group(1) for m in titles if m) == sorted(failed) and len(titles) == len(failed)
    assert (outcome.work / "conformance-reports" / "events.jsonl").stat().st_size > 0


def test_a_baseline_listing_the_failures_passes_the_job_without_annotations(tmp_path: Path, broken_url: str) -> None:
    first = run_action(tmp_path / "a", protocol="agent-protocol", **{"base-url": broken_url}, args=ARGS)
    (tmp_path / "b").mkdir()
    baseline = tmp_path / "b" / "known.yaml"
    entries = [{"id": rid, "reason": "vendor issue 12"} for rid in failed_ids(first)]
    baseline.write_text(yaml.safe_dump({"expected_failures": entries}), encoding="utf-8")
    outcome = run_action(
        tmp_path / "b", protocol="agent-protocol", **{"base-url": broken_url}, args=ARGS, baseline=str(baseline)
    )
    assert outcome.outputs["exit-code"] == "0" and outcome.codes["verdict"] == 0
    assert outcome.errors() == []
    assert "expected fail" in outcome.summary


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


def test_inputs_cannot_inject_shell_and_a_usage_error_still_writes_a_summary(tmp_path: Path) -> None:
    outcome = run_action(tmp_path, protocol="agent-protocol", token="$(touch pwned) `touch pwned2`", args=ARGS)
    assert not any((outcome.work / name).exists() for name in ("pwned", "pwned2"))
    assert outcome.outputs["exit-code"] == "2" and outcome.codes["verdict"] == 2
    assert "no report was written" in outcome.summary
    assert "::add-mask::$(touch pwned)" in outcome.stdout["run"]  # the token is masked in the log


def test_the_action_uploads_the_report_dir_and_sets_up_python() -> None:
    uses = {step["uses"].split("@")[0]: step for step in ACTION["runs"]["steps"] if "uses" in step}
    assert set(uses) == {"actions/setup-python", "actions/upload-artifact"}
    assert uses["actions/upload-artifact"]["with"]["path"] == "${{ inputs.report-dir }}"
    assert uses["actions/upload-artifact"]["if"] == "always()"


def _ci_page_block(marker: str) -> Any:
    page = (REPO / "docs" / "ci.md").read_text(encoding="utf-8")
    blocks = [b.split("```", 1)[0] for b in page.split("```yaml\n")[1:]]
    [block] = [b for b in blocks if marker in b]
    return yaml.safe_load(block)


VENDORED = "tools/agent-conformance"
"""Where the workflows of docs/ci.md expect the kit inside the user's repository."""


def test_the_ci_pages_workflow_runs_the_vendored_kit_and_passes_only_inputs_the_action_has(tmp_path: Path) -> None:
    workflow = _ci_page_block("runs-on: ubuntu-latest")
    checkout, step = workflow["jobs"]["conformance"]["steps"]
    assert checkout["uses"].startswith("actions/checkout@") and checkout["with"]["submodules"] is True
    assert step["uses"] == f"./{VENDORED}"  # a local action: no hosting address to fill in
    assert set(step["with"]) <= set(ACTION["inputs"])
    # the user's checkout with the kit vendored where the workflow looks: GitHub reads action.yml there
    (tmp_path / VENDORED).parent.mkdir(parents=True)
    (tmp_path / VENDORED).symlink_to(REPO, target_is_directory=True)
    assert yaml.safe_load((tmp_path / step["uses"] / "action.yml").read_text(encoding="utf-8")) == ACTION


def test_the_ci_pages_gitlab_job_is_a_valid_command_line_and_its_junit_is_written_where_it_looks() -> None:
    from conformance.cli import parser

    job = _ci_page_block("image: python:3.11")["conformance"]
    assert job["script"][0] == f"pip install ./{VENDORED}" and job["variables"]["GIT_SUBMODULE_STRATEGY"] == "recursive"
    command = next(line for line in job["script"] if line.startswith("python -m conformance "))
    import shlex

    args = parser().parse_args(shlex.split(command.removeprefix("python -m conformance ")))
    assert args.command == "run" and args.protocol == "synapse-agent"
    assert job["artifacts"]["reports"]["junit"] == f"{args.report_dir}/junit.xml"
    assert job["artifacts"]["when"] == "always"  # the reports of a failing run are the ones that matter
