"""``completion bash|zsh|fish``: the scripts are generated from the CLI's parser, and the bash one,
sourced in a real bash, completes as a user's Tab would (COMP_WORDS and COMP_CWORD set as bash
sets them, the completion function called, COMPREPLY read back)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conformance.cli.commands import parser
from conformance.cli.completion import describe, script

REPO = Path(__file__).resolve().parents[3]
PROG = "agent-conformance"


def generated(shell: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "conformance", "completion", shell],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def complete(source: str, line: str) -> list[str]:
    """What bash offers for ``line`` (its last word is the one being completed, "" after a space)."""
    words = line.split(" ")
    program = (
        f"{source}\n"
        f"COMP_WORDS=({' '.join(repr(w) for w in words)}); COMP_CWORD={len(words) - 1}\n"
        'COMP_LINE="${COMP_WORDS[*]}"; COMP_POINT=${#COMP_LINE}\n'
        f"$(complete -p {PROG} | sed -E 's/.*-F ([^ ]+) .*/\\1/')\n"
        'printf "%s\\n" "${COMPREPLY[@]}"\n'
    )
    done = subprocess.run(["bash", "--norc", "--noprofile"], input=program, capture_output=True, text=True, timeout=30)
    assert done.returncode == 0 and not done.stderr, done.stderr
    return [w for w in done.stdout.splitlines() if w]


@pytest.fixture(scope="module")
def bash_script() -> str:
    return script(parser(PROG), "bash", PROG)


def test_a_subcommand_completes_from_its_prefix(bash_script: str) -> None:
    assert complete(bash_script, f"{PROG} ru") == ["run"]
    assert set(complete(bash_script, f"{PROG} ")) >= {"run", "selfcheck", "client", "completion"}


def test_an_option_and_its_choices_complete(bash_script: str) -> None:
    assert complete(bash_script, f"{PROG} run --proto") == ["--protocol"]
    assert complete(bash_script, f"{PROG} run --protocol agent-protocol --progress l") == ["lines"]
    assert complete(bash_script, f"{PROG} run --protocol s") == ["sgr-agent-core", "synapse-agent"]
    assert complete(bash_script, f"{PROG} completion ") == ["bash", "zsh", "fish"]
    # a value the parser does not choose from gets no option names (bash falls back to files)
    assert complete(bash_script, f"{PROG} run --base-url ") == []


def test_the_script_follows_the_parser() -> None:
    """An option added to the parser is completed without touching the generator."""
    p = parser(PROG)
    cli = describe(p)
    run = next(s for s in cli.subcommands if s.name == "run")
    flags = {f for o in run.options for f in o.flags}
    assert {"--protocol", "--base-url", "--progress", "--expected-failures"} <= flags
    sub = next(a for a in p._actions if a.dest == "command")
    assert sub.choices is not None
    sub.choices["run"].add_argument("--brand-new-option")
    assert complete(script(p, "bash", PROG), f"{PROG} run --brand") == ["--brand-new-option"]


def test_the_command_prints_the_script_for_each_shell() -> None:
    source = generated("bash")
    assert complete(source, f"{PROG} ru") == ["run"]
    assert "bashcompinit" in generated("zsh")
    fish = generated("fish")
    assert f"complete -c {PROG} -n '__fish_seen_subcommand_from run' -l protocol -r -f -a " in fish


@pytest.mark.skipif(shutil.which("zsh") is None, reason="no zsh here")
def test_the_zsh_script_loads_in_zsh() -> None:
    done = subprocess.run(["zsh", "-f"], input=generated("zsh"), capture_output=True, text=True, timeout=30)
    assert done.returncode == 0 and not done.stderr, done.stderr


@pytest.mark.skipif(shutil.which("fish") is None, reason="no fish here")
def test_the_fish_script_completes_in_fish() -> None:
    program = generated("fish") + f"complete -C '{PROG} run --proto'\n"
    done = subprocess.run(["fish", "--no-config"], input=program, capture_output=True, text=True, timeout=30)
    assert done.returncode == 0 and done.stdout.startswith("--protocol"), done.stdout + done.stderr
