"""No token given to a run reaches anything it writes: evidence, curl lines and scripts name each by
a shell variable, which the shell (or replay, given the tokens again) expands."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from conformance.check.credentials import Credentials, redact_exchange
from conformance.check.curl import curl_command
from conformance.cli.commands import main
from conformance.verdicts.results import Exchange
from mockserver import EmbeddedServer, MockConfig

TOKEN, SECOND = "s3cr3t-token-of-alice", "s3cr3t-token-of-bob"


def test_an_exchange_names_the_tokens_and_its_curl_line_expands_them() -> None:
    given = Credentials.of(TOKEN, SECOND)
    headers = {"authorization": f"Bearer {TOKEN}", "x-other": SECOND}
    ex = Exchange("POST", f"http://h/x?t={TOKEN}", headers, f'{{"t": "{TOKEN}"}}', 401, {}, f"bad token {SECOND}")
    ex.curl = curl_command(ex.method, ex.url, ex.request_headers, (ex.request_body or "").encode())
    redact_exchange(ex, given)
    text = repr(ex)
    assert TOKEN not in text and SECOND not in text
    assert ex.request_headers["authorization"] == "Bearer ${TOKEN}" and ex.response_body == "bad token ${SECOND_TOKEN}"
    assert "'authorization: Bearer '\"${TOKEN}\"" in ex.curl
    echo = subprocess.run(
        ["sh", "-c", ex.curl.replace("curl ", "printf '%s\\n' ", 1)],
        capture_output=True,
        text=True,
        env={**os.environ, "TOKEN": TOKEN, "SECOND_TOKEN": SECOND},
        check=True,
    ).stdout
    assert f"authorization: Bearer {TOKEN}" in echo and f"http://h/x?t={TOKEN}" in echo
    assert given.fill(ex.url) == f"http://h/x?t={TOKEN}"


def test_tokens_are_given_again_from_the_command_line_or_the_environment() -> None:
    assert Credentials.from_environment("a-token", None, {"SECOND_TOKEN": "b-token"}).values == {
        "TOKEN": "a-token",
        "SECOND_TOKEN": "b-token",
    }
    env = {"CONFORMANCE_TOKEN": "run-token", "TOKEN": "script-token"}
    assert Credentials.from_environment(None, None, env).values == {"TOKEN": "run-token"}
    missing = Credentials.of("a-token", None).missing([Exchange("GET", "http://h/${SECOND_TOKEN}", {}, None)])
    assert missing == ["SECOND_TOKEN"]


@pytest.mark.parametrize("fault", ["syn-cross-user-access"])
def test_no_token_given_to_a_run_appears_in_any_file_it_writes(fault: str, tmp_path: Path) -> None:
    with EmbeddedServer(
        MockConfig(protocols=("synapse-agent",), faults=(fault,), tokens={"alice": TOKEN, "bob": SECOND})
    ) as server:
        code = main(
            [
                "run",
                "--protocol",
                "synapse-agent",
                "--base-url",
                server.url + "/repo/v1",
                "--token",
                TOKEN,
                "--second-token",
                SECOND,
                "--only",
                "SYN-OWN",
                "--only",
                "SYN-AUTH",
                "--max-examples",
                "2",
                "--report-dir",
                str(tmp_path / "reports"),
                "--events",
                str(tmp_path / "events.ndjson"),
                "-q",
            ]
        )
    assert code == 1  # the fault's findings are in the reports
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert any(p.parent.name == "reproduce" for p in files)
    for path in files:
        text = path.read_bytes()
        assert TOKEN.encode() not in text and SECOND.encode() not in text, path
    results = (tmp_path / "reports" / "results.json").read_text(encoding="utf-8")
    assert "Bearer ${TOKEN}" in results and "${SECOND_TOKEN}" in results
