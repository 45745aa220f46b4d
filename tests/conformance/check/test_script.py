"""A finding's script: POSIX sh, curl, and grep/sed to capture ids; nothing a user may lack."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from conformance.check.script import expected, fingerprint, script
from conformance.verdicts.reproduction import Reproduction, reproduction
from conformance.verdicts.results import Exchange

BASE = "http://127.0.0.1:9/ap/v1/agent/tasks"
TASK = "6f1c1a52-0d6e-4a0b-9a55-3f1a2b3c4d5e"
TOOLS = {
    "curl",
    "grep",
    "sed",
    "tr",
    "awk",
    "sort",
    "cksum",
    "dd",
    "cmp",
    "diff",
    "cat",
    "printf",
    "mktemp",
    "rm",
    "echo",
}


def _rep() -> Reproduction:
    calls = [
        Exchange(
            "POST",
            BASE,
            {"content-type": "application/json"},
            '{"input": "it\'s $HOME"}',
            200,
            {"content-type": "application/json"},
            f'{{"task_id": "{TASK}", "created_at": "2026-01-01T00:00:00.5Z"}}',
        ),
        Exchange(
            "GET",
            f"{BASE}/{TASK}",
            {},
            None,
            200,
            {"content-type": "application/json", "date": "x"},
            f'{{"task_id": "{TASK}", "additional_input": {{}}}}',
        ),
    ]
    return reproduction(calls, 1)


def test_the_script_is_posix_sh_and_uses_only_common_tools() -> None:
    text = script(
        _rep(), 'AP-TASK-002|GET|scenario:x\nadditional_input {} is not the {"a": 1} sent', "http://127.0.0.1:9"
    )
    if shutil.which("sh"):
        assert subprocess.run(["sh", "-n"], input=text.encode(), capture_output=True).returncode == 0
    assert "jq" not in text and "python" not in text
    assert '\'{"input": "it\'"\'"\'s $HOME"}\'' in text  # the body as sent, never expanded by the shell
    assert 'capture TASK_ID "$(grep -o' in text and '"$BASE"/ap/v1/agent/tasks/"${TASK_ID}"' in text


def test_what_every_run_makes_anew_is_blanked_and_captured_ids_named() -> None:
    rep = _rep()
    assert expected(rep, 0).endswith('--\n{"task_id": "{TASK_ID}", "created_at": "<date-time>Z"}')
    assert "date:" not in expected(rep, 1)  # a header that changes by itself is not compared
    assert fingerprint("id 123456789012 and 0b8e6f1e-2222-4a0b-9a55-3f1a2b3c4d5e", {}) == "id <n> and <uuid>"


@pytest.mark.skipif(shutil.which("sed") is None, reason="sed is not installed")
def test_sed_blanks_what_python_blanks() -> None:
    from conformance.check.script import VOLATILE

    sample = "a 2026-01-01T00:00:00.123Z b 1712345678.25 c 0b8e6f1e-2222-4a0b-9a55-3f1a2b3c4d5e"
    sample += " d deadbeefdeadbeefdeadbeefdead"
    args = [a for _, sed, mark in VOLATILE for a in ("-e", f"s/{sed}/{mark}/g")]
    done = subprocess.run(["sed", *args], input=sample.encode(), capture_output=True, check=True)
    assert done.stdout.decode().strip() == fingerprint(sample, {})
