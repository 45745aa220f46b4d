"""The container recipe (Dockerfile, .dockerignore; docs/usage.md "In a container"), checked
without a Docker engine, which the project's machines do not have: a slim base pinned to a minor
Python the kit supports, the kit installed from the build context without extras, a non-root
user, entry points that are the kit's console scripts, a context that leaves local state out and
still builds the wheel, and a documented mock command a published port can reach, with the admin
token story the mock's gate imposes on a non-loopback address."""

from __future__ import annotations

import fnmatch
import re
import shlex
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

from mockserver.__main__ import choose_admin_token
from mockserver.gate import TOKEN_ENV, Gate, GateError

REPO = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
SCRIPTS: dict[str, str] = PYPROJECT["project"]["scripts"]
DOCS = (REPO / "docs" / "usage.md").read_text(encoding="utf-8")
DOCKER_RUNS = [line for line in DOCS.replace("\\\n", " ").splitlines() if line.startswith("docker run")]
"""The documented ``docker run`` commands, each on one line."""


def instructions(text: str) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) in order, continuation lines joined, comments dropped."""
    joined = re.sub(r"\\\n\s*", " ", "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#")))
    return [(k.upper(), v.strip()) for k, _, v in (line.strip().partition(" ") for line in joined.splitlines() if line)]


DOCKERFILE = instructions((REPO / "Dockerfile").read_text(encoding="utf-8"))


def only(name: str) -> list[str]:
    return [v for k, v in DOCKERFILE if k == name]


def test_the_base_is_a_slim_python_pinned_to_a_minor_version_the_kit_supports() -> None:
    (base,) = only("FROM")
    m = re.fullmatch(r"python:3\.(\d+)-slim(-[a-z]+)?", base)
    assert m, base
    lowest = re.fullmatch(r">=3\.(\d+)", PYPROJECT["project"]["requires-python"])
    assert lowest and int(m.group(1)) >= int(lowest.group(1))


def test_the_kit_is_installed_from_the_build_context_without_extras_as_a_non_root_user() -> None:
    (copy,) = only("COPY")
    source, target = copy.split()
    assert source == "."
    installs = [cmd.strip() for run in only("RUN") for cmd in run.split("&&") if "pip install" in cmd]
    assert installs == [f"pip install {target}"]  # the context's path alone: no [extras], not editable
    users = only("USER")
    assert users and users[-1] not in ("root", "0")
    assert [k for k, _ in DOCKERFILE].index("USER") < [k for k, _ in DOCKERFILE].index("ENTRYPOINT")


def exec_form(value: str) -> list[str]:
    assert value.startswith("["), f"shell form: {value} (signals would not reach the program)"
    return re.findall(r'"([^"]*)"', value)


def test_the_entry_points_are_the_kits_console_scripts() -> None:
    (entry,) = only("ENTRYPOINT")
    assert exec_form(entry) == ["agent-conformance"] and "agent-conformance" in SCRIPTS
    documented = [shlex.split(line) for line in DOCKER_RUNS]
    entries = [words[words.index("--entrypoint") + 1] for words in documented if "--entrypoint" in words]
    assert entries == ["agent-mock"] and "agent-mock" in SCRIPTS


def ignored(patterns: list[str], relative: str) -> bool:
    return any(fnmatch.fnmatch(relative, p) or relative.split("/")[0] == p for p in patterns)


def dockerignore() -> list[str]:
    text = (REPO / ".dockerignore").read_text(encoding="utf-8")
    return [line.strip() for line in text.splitlines() if line.strip() and not line.startswith("#")]


def test_the_build_context_leaves_local_state_out() -> None:
    patterns = dockerignore()
    for local in (".venv", ".git", "reports", ".peers"):
        assert ignored(patterns, local) and ignored(patterns, f"{local}/anything"), local


@pytest.mark.timeout(300)
def test_the_build_context_builds_the_wheel_with_both_console_scripts(tmp_path: Path) -> None:
    """What `pip install /tmp/src` gets: the tracked files .dockerignore lets through."""
    tracked = subprocess.run(["git", "ls-files"], cwd=REPO, capture_output=True, text=True, check=True).stdout
    context = tmp_path / "context"
    patterns = dockerignore()
    for relative in tracked.splitlines():
        if not ignored(patterns, relative) and (REPO / relative).is_file():
            (context / relative).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / relative, context / relative)
    assert not (context / "tests").exists()
    done = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-w", str(tmp_path), str(context)],
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert done.returncode == 0, done.stderr
    (wheel,) = tmp_path.glob("*.whl")
    with zipfile.ZipFile(wheel) as z:
        (entry_points,) = [n for n in z.namelist() if n.endswith("entry_points.txt")]
        text = z.read(entry_points).decode()
        assert any(n.startswith("mockserver/") for n in z.namelist())
    for name, target in SCRIPTS.items():
        assert f"{name} = {target}" in text


def test_the_documented_mock_command_listens_where_a_published_port_reaches_it() -> None:
    (mock,) = [line for line in DOCKER_RUNS if "agent-mock" in line]
    words = shlex.split(mock)
    assert words[words.index("--host") + 1] == "0.0.0.0" and "-p" in words
    # the published port's requests name localhost: the gate of a wildcard bind answers them
    assert Gate("0.0.0.0", admin_token="t").allows("localhost")


def test_the_docs_tell_the_admin_token_story_the_gate_imposes_off_loopback() -> None:
    with pytest.raises(GateError):  # what the docs explain: no open admin API off loopback
        Gate("0.0.0.0")
    token, made_up = choose_admin_token(None, "0.0.0.0", {})
    assert token and made_up  # made up and printed at start
    assert choose_admin_token(None, "0.0.0.0", {TOKEN_ENV: "given"}) == ("given", False)
    section = DOCS[DOCS.index("## In a container") :]
    assert f"-e {TOKEN_ENV}" in section and "makes one up and prints it" in section
    assert "Authorization: Bearer" in section
