"""A finding's script: POSIX sh, curl, and grep/sed to capture ids; nothing a user may lack."""

from __future__ import annotations

import shutil
import subprocess
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from conformance.check.script import _headers, expected, fingerprint, observed, prelude, script, undecidable
from conformance.verdicts.reproduction import STATUS, Reproduction, reproduction
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
    from conformance.check.script import RANK_DATES, VOLATILE

    sample = "a 2026-01-01T00:00:00.123Z b 1712345678.25 c 0b8e6f1e-2222-4a0b-9a55-3f1a2b3c4d5e"
    sample += " d deadbeefdeadbeefdeadbeefdead e 2025-12-31 23:59:59 f 2026-01-01T00:00:00.123Z\ng 1712345678123"
    sample += " h 2025-12-31T23:59:59.5Z"
    args = [a for _, sed, mark in VOLATILE for a in ("-e", f"s/{sed}/{mark}/g")]
    blanked = subprocess.run(["sed", *args], input=sample.encode(), capture_output=True, check=True).stdout
    seconds = subprocess.run(["awk", RANK_DATES], input=blanked, capture_output=True, check=True)
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


class _Later(BaseHTTPRequestHandler):
    """The task of ``_rep()``, read a moment later: one more item in its answer (a job ran on),
    or, from ``/fixed``, refused as a fixed server refuses it."""

    def do_POST(self) -> None:
        self._answer(200, f'{{"task_id": "{TASK}", "created_at": "2026-01-01T00:00:01.5Z"}}')

    def do_GET(self) -> None:
        fixed = self.path.startswith("/fixed")
        self._answer(401 if fixed else 200, f'{{"task_id": "{TASK}", "additional_input": {{"more": 1}}}}')

    def _answer(self, status: int, body: str) -> None:
        self.rfile.read(int(self.headers.get("content-length") or 0))
        data = body.encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def later() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Later)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_a_finding_that_judged_the_status_alone_is_compared_by_status(later: str) -> None:
    full, status = _rep(), _rep()
    status.judged = STATUS
    assert expected(status, 1) == "HTTP 200"
    assert observed(status, 1, 200, [("content-type", "text/plain")], b"other", {}) == "HTTP 200"
    # what the report kept of the answer does not matter when its status is all that was judged
    status.steps[1].response_body = "{" + "x" * 10 + "... [5000 more characters]"
    assert undecidable(full) is False and undecidable(status) is False
    if not (shutil.which("sh") and shutil.which("curl")):
        pytest.skip("sh or curl is not installed")

    def run(rep: Reproduction, base: str) -> int:
        text = script(rep, "AP-TASK-002|GET|scenario:x", "http://127.0.0.1:9")
        return subprocess.run(["sh", "-c", text, "sh", base], capture_output=True, timeout=60).returncode

    assert run(full, later) == 1  # the body read later differs: compared whole, it is not the recorded one
    assert run(status, later) == 0  # the status is: reproduced
    assert run(status, later + "/fixed") == 1  # a fixed server's 401: not reproduced


def test_a_status_finding_comes_back_with_any_status_its_check_would_not_accept(later: str) -> None:
    """Recorded 202 (a job still running) where a 401 was due; today the job has finished, 200:
    still not the 401, so the failure is back. Only the accepted status says it is gone."""
    rep = _rep()
    rep.judged, rep.accepted = STATUS, [401]
    rep.steps[1].status = 202
    assert expected(rep, 1) == "HTTP not 401"
    assert observed(rep, 1, 200, [], b"", {}) == expected(rep, 1)
    assert observed(rep, 1, 401, [], b"", {}) != expected(rep, 1)
    assert observed(rep, 0, 201, [], b"", {}) == "HTTP 201" != expected(rep, 0)  # a setup call: as recorded
    if not (shutil.which("sh") and shutil.which("curl")):
        pytest.skip("sh or curl is not installed")

    def run(r: Reproduction, base: str) -> int:
        text = script(r, "SYN-AUTH-002|GET|scenario:x", "http://127.0.0.1:9")
        return subprocess.run(["sh", "-c", text, "sh", base], capture_output=True, timeout=60).returncode

    assert run(rep, later) == 0  # 200: not the 401 due, reproduced
    assert run(rep, later + "/fixed") == 1  # the 401: not reproduced
    rep.accepted = []
    assert run(rep, later) == 1  # without the accepted statuses, 200 is not the recorded 202


@pytest.mark.skipif(not all(map(shutil.which, ("sh", "awk", "sed", "sort"))), reason="sh, awk, sed or sort missing")
def test_the_script_compares_headers_and_bodies_as_replay_does() -> None:
    """The script's header and body fingerprints (awk and sed, few processes) are the ones replay's
    Python makes: curl's last block of headers only (a 100 Continue before it), carriage returns
    gone, names lowered, values trimmed (an empty one too), volatile headers left out, captured
    values named longest first, date-times ranked among the headers and among the body apart."""
    head = (
        "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Type:  application/json \r\nDate: x\r\n"
        "X-Empty:\r\nX-Task:task_ab12\t\r\nX-Later: 2026-01-02T00:00:00.5Z\r\nX-First: 2026-01-01T00:00:00.5Z\r\n"
        "Last-Modified: y\r\nX-Seconds: 2026-01-01 10:00:00\r\n\r\n"
    )
    body = '{"id": "task_ab12", "agent": "ab12", "at": "2026-05-01T00:00:00.25Z", "n": 1712345678123}\n{"more": 1}'
    shell = prelude() + '\nprintf %s "$HEAD" > "$D/1.head"; name TASK ab12; name TASK_ID task_ab12; named\n'
    shell += 'heads 1; echo --; printf %s "$BODY" | norm'
    done = subprocess.run(
        ["sh", "-c", shell], capture_output=True, env={"PATH": "/usr/bin:/bin", "HEAD": head, "BODY": body}, check=True
    )
    block = head.split("\r\n\r\n")[1].split("\r\n")[1:]
    pairs = [(line.split(":", 1)[0], line.split(":", 1)[1]) for line in block]
    named = {"ab12": "TASK", "task_ab12": "TASK_ID"}
    assert done.stdout.decode() == "\n".join([*_headers(pairs, named), "--", fingerprint(body, named)])
    assert "x-empty:" in done.stdout.decode() and "date:" not in done.stdout.decode()
