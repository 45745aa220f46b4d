"""report.html in a real browser (headless Chromium): no horizontal overflow at 1280 px, evidence
collapsed, text shown as characters. Skipped, saying so, where Chromium is not installed
(``apt-get install -y chromium``; the Makefile's ci target installs it)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from conformance.reporting import render_html
from conformance.verdicts.requirements import Level, Requirement
from conformance.verdicts.results import Exchange, Finding, RequirementResult, RunResult, Status

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="headless Chromium is not installed (apt-get install chromium)"
)


def _run() -> RunResult:
    long_url = "http://127.0.0.1:9/ap/v1/agent/tasks?" + "page_size=2147483648&" * 40
    ex = Exchange(
        "GET",
        long_url,
        {"accept": "*/*"},
        None,
        500,
        {"content-type": "application/json"},
        '{"message": "caf\\u00e9 ' + "x" * 900 + '"}',
    )
    ex.curl = f"curl -sS -i -X GET --globoff '{long_url}'"
    req = Requirement("AP-SCHEMA-001", Level.MUST, "No request makes the server answer 5xx " + "y" * 300, "doc", "ap")
    finding = Finding(
        f"AP-SCHEMA-001|GET /ap/v1/agent/tasks|ST101:500{'z' * 200}",
        "AP-SCHEMA-001",
        "GET /ap/v1/agent/tasks",
        "ST101:500",
        "Server error " + "w" * 400,
        3,
        [ex],
    )
    run = RunResult("agent-protocol", "http://127.0.0.1:9", "1", 0, Level.MAY, "2026-01-01T00:00:00+00:00")
    run.results = [RequirementResult(req, Status.FAILED, "3 of 9 generated cases failed", [ex], findings=[finding])]
    return run


def test_the_page_fits_1280_px_keeps_evidence_collapsed_and_shows_characters(tmp_path: Path) -> None:
    (tmp_path / "report.html").write_text(render_html(_run()), encoding="utf-8")
    (tmp_path / "harness.html").write_text(
        "<!doctype html><html><head><title>pending</title></head><body style='margin:0'>"
        "<iframe id='r' src='report.html' style='width:1280px;height:800px;border:0'></iframe><script>"
        "document.getElementById('r').onload=function(){var d=this.contentDocument;"
        "var open=[].filter.call(d.querySelectorAll('details'),function(x){return x.open}).length;"
        "document.title=[d.documentElement.scrollWidth,d.documentElement.clientWidth,open,"
        "d.body.textContent.indexOf('caf\\u00e9')>=0].join(',')};</script></body></html>",
        encoding="utf-8",
    )
    assert CHROMIUM is not None
    done = subprocess.run(
        [
            CHROMIUM,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            f"--user-data-dir={tmp_path / 'profile'}",
            "--allow-file-access-from-files",
            "--virtual-time-budget=5000",
            "--dump-dom",
            (tmp_path / "harness.html").as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    title = re.search(r"<title>([^<]*)</title>", done.stdout)
    assert title is not None, done.stderr[-2000:]
    scroll, client, open_details, characters = title.group(1).split(",")
    assert int(scroll) <= int(client) == 1280  # nothing overflows sideways
    assert open_details == "0"  # evidence collapsed by default
    assert characters == "true"  # \u00e9 in the server's JSON is shown as é
