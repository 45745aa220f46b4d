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
    "wc",
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
    assert expected(rep, 0).endswith('--\n{"task_id": "{TASK_ID}", "created_at": "<date-time#1>Z"}')
    assert "date:" not in expected(rep, 1)  # a header that changes by itself is not compared
    assert fingerprint("id 123456789012 and 0b8e6f1e-2222-4a0b-9a55-3f1a2b3c4d5e", {}) == "id <n12> and <uuid>"


@pytest.mark.skipif(shutil.which("sed") is None, reason="sed is not installed")
def test_sed_blanks_what_python_blanks() -> None:
    from conformance.check.script import RANK_DATES, SECONDS, VOLATILE

    sample = "a 2026-01-01T00:00:00.123Z b 1712345678.25 c 0b8e6f1e-2222-4a0b-9a55-3f1a2b3c4d5e"
    sample += " d deadbeefdeadbeefdeadbeefdead e 2025-12-31 23:59:59 f 2026-01-01T00:00:00.123Z\ng 1712345678123"
    sample += " h 2025-12-31T23:59:59.5Z"
    args = [a for _, sed, mark in VOLATILE for a in ("-e", f"s/{sed}/{mark}/g")]
    blanked = subprocess.run(["sed", *args], input=sample.encode(), capture_output=True, check=True).stdout
    ranked = subprocess.run(["awk", RANK_DATES], input=blanked, capture_output=True, check=True).stdout
    seconds = subprocess.run(["sed", f"s/{SECONDS[1]}/{SECONDS[2]}/g"], input=ranked, capture_output=True, check=True)
    assert seconds.stdout.decode() == fingerprint(sample, {})
    assert "a <date-time#2>Z" in seconds.stdout.decode() and "e <date-time> f <date-time#2>Z" in seconds.stdout.decode()
    assert "h <date-time#1>Z" in seconds.stdout.decode()  # earlier: ranked first; the same time: the same rank


def test_a_script_takes_the_tokens_from_the_environment() -> None:
    call = Exchange("GET", f"{BASE}/{TASK}", {"authorization": "Bearer ${TOKEN}"}, None, 200, {}, "{}")
    text = script(Reproduction([call, call]), "SYN-OWN-001|GET|scenario:x", "http://127.0.0.1:9")
    assert "# Usage: TOKEN=... sh THIS_FILE [BASE_URL]" in text and "\nsecret TOKEN\n" in text
    assert "-H 'authorization: Bearer '\"${TOKEN}\"" in text and "SECOND_TOKEN" not in text
    if shutil.which("sh"):
        assert subprocess.run(["sh", "-n"], input=text.encode(), capture_output=True).returncode == 0
        # without the token it cannot tell: it says which variable to set
        run = subprocess.run(
            ["sh", "-c", text, "sh", "http://127.0.0.1:9"], capture_output=True, env={"PATH": "/usr/bin:/bin"}
        )
        assert run.returncode == 2 and b"set TOKEN" in run.stdout
