"""The publishing workflow (.github/workflows/release.yml): a version tag, and only a version tag,
builds the sdist and the wheel, checks them with twine, and publishes them to PyPI by trusted
publishing (an OpenID Connect token, id-token: write), with no stored password or API token.
Read as GitHub reads it; the tag-versus-version step runs as its shell would."""

from __future__ import annotations

import copy
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from specs.program import __version__

REPO = Path(__file__).resolve().parents[1]
WORKFLOW = REPO / ".github" / "workflows" / "release.yml"
PUBLISH_ACTION = "pypa/gh-action-pypi-publish"


def load() -> dict[str, Any]:
    doc: dict[str, Any] = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    doc["on"] = doc.pop(True, doc.get("on"))  # YAML 1.1 reads the bare key `on` as true
    return doc


def glob_matches(pattern: str, ref: str) -> bool:
    """GitHub's filter pattern syntax: ``*`` any characters but ``/``, ``[...]`` a class, ``+`` one
    or more of what precedes it, ``?`` zero or one; everything else literal."""
    regex, i = "", 0
    while i < len(pattern):
        c = pattern[i]
        if c == "[":
            end = pattern.index("]", i)
            regex += pattern[i : end + 1]
            i = end + 1
            continue
        regex += {"*": "[^/]*", "+": "+", "?": "?"}.get(c, re.escape(c))
        i += 1
    return re.fullmatch(regex, ref) is not None


def steps(job: dict[str, Any]) -> list[dict[str, Any]]:
    return list(job.get("steps", []))


def problems(doc: dict[str, Any]) -> list[str]:
    """What would make the workflow publish when it should not, publish unchecked, or hold a secret."""
    found = []
    on = doc["on"]
    if set(on) != {"push"} or set(on["push"]) != {"tags"}:
        found.append(f"triggered by more than a pushed tag: {on}")
    tags = on.get("push", {}).get("tags", [])
    for ref, publishes in (("v0.2.0", True), ("v1.0.0rc1", True), ("v0", False), ("main", False), ("x0.2.0", False)):
        if any(glob_matches(p, ref) for p in tags) is not publishes:
            found.append(f"tag {ref} {'does not publish' if publishes else 'publishes'}")
    if "id-token" in (doc.get("permissions") or {}):
        found.append("id-token granted to every job, not to the publishing one alone")
    jobs: dict[str, dict[str, Any]] = doc["jobs"]
    publishing = [name for name, job in jobs.items() if any(PUBLISH_ACTION in s.get("uses", "") for s in steps(job))]
    if len(publishing) != 1:
        return [*found, f"jobs that publish: {publishing}"]
    publish = jobs[publishing[0]]
    if (publish.get("permissions") or {}).get("id-token") != "write":
        found.append("the publishing job has no id-token: write (trusted publishing)")
    for step in steps(publish):
        if PUBLISH_ACTION in step.get("uses", "") and {"password", "user"} & set(step.get("with") or {}):
            found.append("the publish step is given a user or password")
    if "secrets." in yaml.safe_dump(doc):
        found.append("a stored secret is read")
    needs = publish.get("needs", [])
    needed = [needs] if isinstance(needs, str) else needs
    scripts = " ".join(s.get("run", "") for name in needed for s in steps(jobs.get(name, {})))
    if "python -m build" not in scripts:
        found.append("the publishing job does not wait for a job that runs python -m build")
    if not re.search(r"twine check( --strict)? dist/\*", scripts):
        found.append("the publishing job does not wait for twine check")
    return found


def test_the_workflow_builds_checks_and_publishes_only_on_a_version_tag_by_trusted_publishing() -> None:
    assert problems(load()) == []


def without_id_token(doc: dict[str, Any]) -> None:
    del doc["jobs"]["publish"]["permissions"]


def with_a_password(doc: dict[str, Any]) -> None:
    doc["jobs"]["publish"]["steps"][-1]["with"] = {"password": "${{ secrets.PYPI_API_TOKEN }}"}


def on_every_push(doc: dict[str, Any]) -> None:
    doc["on"] = {"push": {"branches": ["main"], "tags": ["v*"]}}


def on_any_v_tag(doc: dict[str, Any]) -> None:
    doc["on"] = {"push": {"tags": ["v*"]}}  # v0, the Action's moving tag, would publish


def unchecked(doc: dict[str, Any]) -> None:
    for step in doc["jobs"]["build"]["steps"]:
        step["run"] = step.get("run", "").replace("twine check", "twine --version")


def token_for_all(doc: dict[str, Any]) -> None:
    doc["permissions"] = {"contents": "read", "id-token": "write"}


@pytest.mark.parametrize(
    "breaks", [without_id_token, with_a_password, on_every_push, on_any_v_tag, unchecked, token_for_all]
)
def test_each_way_of_breaking_it_is_caught(breaks: Any) -> None:
    doc = copy.deepcopy(load())
    breaks(doc)
    assert problems(doc), breaks.__name__


def version_step() -> str:
    (script,) = [s["run"] for s in steps(load()["jobs"]["build"]) if "__version__" in s.get("run", "")]
    return str(script)


@pytest.mark.parametrize(("tag", "ok"), [(f"v{__version__}", True), ("v0.0.1", False), (__version__, False)])
def test_a_tag_that_does_not_name_the_packages_version_stops_the_build(tag: str, ok: bool) -> None:
    """A tag pushed before __version__ was set (docs/development.md step 1) would publish the
    wrong version under it: the step compares them as the runner's bash would."""
    env = {"PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}", "TAG": tag}
    done = subprocess.run(
        ["bash", "-eo", "pipefail", "-c", version_step()], cwd=REPO, env=env, capture_output=True, text=True
    )
    assert (done.returncode == 0) is ok, done.stdout + done.stderr
