"""docs/ci.md's campaign workflow works as written: each matrix job's action step runs action.yml's
shell steps (tests/test_action.py's fake GitHub), the artifacts are laid out as
actions/download-artifact lays them (one folder per artifact), and the merge job's shell steps
merge them into one run's reports and the job summary."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from mockserver import EmbeddedServer, MockConfig
from specs.documents import load
from tests.test_action import REPO, run_action

PAGE = (REPO / "docs" / "ci.md").read_text(encoding="utf-8")
WORKFLOW: dict[str, Any] = yaml.safe_load(PAGE.split("<!-- campaign-workflow -->\n```yaml\n", 1)[1].split("```", 1)[0])
SMOKE = "smoke"
"""The depth the test runs the workflow at: the steps are the workflow's, the campaign smaller
(a deep one is tests/conformance/evidence/test_merge.py's)."""


def expand(text: str, values: dict[str, str]) -> str:
    def sub(m: re.Match[str]) -> str:
        return values[m.group(1)]

    return re.sub(r"\$\{\{\s*([A-Za-z0-9_.]+)\s*\}\}", sub, text)


@pytest.mark.slow  # four shards and a merge through the command line
def test_the_campaign_workflow_runs_its_shards_and_merges_them(tmp_path: Path) -> None:
    shard_job, merge_job = WORKFLOW["jobs"]["shard"], WORKFLOW["jobs"]["merge"]
    assert merge_job["needs"] == "shard" and merge_job["if"] == "always()"
    [action] = [s for s in shard_job["steps"] if s.get("uses") == "./tools/agent-conformance"]
    assert action.get("continue-on-error") is True
    shards = shard_job["strategy"]["matrix"]["shard"]
    downloads = tmp_path / "merge" / "shards"
    with EmbeddedServer(MockConfig(protocols=("neuro-san",))) as server:
        url = server.url + load("neuro-san").info.base_path
        for k in shards:
            values = {"matrix.shard": str(k), "vars.NEURO_SAN_URL": url}
            inputs = {name: expand(str(v), values) for name, v in action["with"].items()}
            assert inputs["depth"] == "deep" and inputs["shard"] == f"{k}/{len(shards)}"
            inputs["depth"] = SMOKE
            outcome = run_action(tmp_path / f"shard{k}", **inputs)
            assert outcome.codes["run"] == 0 and outcome.outputs["exit-code"] in ("0", "1"), outcome.stdout
            # actions/download-artifact with a pattern: each artifact in a folder of its name
            shutil.copytree(outcome.work / inputs["report-dir"], downloads / inputs["artifact-name"])

    work = tmp_path / "merge"
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    installs = tmp_path / "pip-installs"
    (bin_dir / "python").write_text(  # pip install is recorded, not run: the kit is importable here
        "#!/bin/sh\n"
        f'if [ "$1 $2" = "-m pip" ]; then echo "$@" >> "{installs}"; exit 0; fi\n'
        f'exec "{sys.executable}" "$@"\n',
        encoding="utf-8",
    )
    (bin_dir / "python").chmod(0o755)
    summary = tmp_path / "summary.md"
    summary.write_text("", encoding="utf-8")
    env = {
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        "HOME": str(tmp_path),
        "PYTHONPATH": str(REPO),
        "PYTHONHASHSEED": "0",
        "GITHUB_ACTIONS": "true",
        "GITHUB_WORKSPACE": str(work),
        "GITHUB_STEP_SUMMARY": str(summary),
        "GITHUB_OUTPUT": str(tmp_path / "output"),
    }
    ran = 0
    for step in merge_job["steps"]:
        if "run" not in step:
            continue
        assert "${{" not in step["run"], "a step splices an expression into its script"
        done = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]],
            cwd=work,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert done.returncode == 0, done.stdout + done.stderr
        ran += 1
    assert ran == 1
    assert installs.read_text(encoding="utf-8").split()[-1] == "./tools/agent-conformance"
    merged = json.loads((work / "merged" / "results.json").read_text(encoding="utf-8"))
    assert len(merged["merged_from"]) == len(shards) and "shard" not in merged
    assert {r["status"] for r in merged["requirements"]} == {"passed"}
    assert "neuro-san" in summary.read_text(encoding="utf-8")
