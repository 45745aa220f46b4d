"""report.html in a real browser (headless Chromium): no horizontal overflow at 1280 px, evidence
collapsed, text shown as characters. Skipped, saying so, where Chromium is not installed
(``apt-get install -y chromium``; the Makefile's ci target installs it)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from conformance.reporting import render_html
from conformance.verdicts.requirements import Level, Requirement
from conformance.verdicts.results import Exchange, Finding, RequirementResult, RunResult, Status
from tests.chromium import CHROMIUM, MISSING, headless, page_title

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason=MISSING)


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
    run.meta = {"target_name": "Acme Agents", "target_version": "2.4.1"}
    binary = Exchange("GET", "http://127.0.0.1:9/x", {}, None, 200, {"content-type": "application/octet-stream"})
    binary.response_body = bytes(range(32)).decode("latin-1") + "\x1b[31mred\x7f"
    should = Requirement("AP-STEP-003", Level.SHOULD, "A step list pages", "doc", "ap")
    run.results = [
        RequirementResult(req, Status.FAILED, "3 of 9 generated cases failed", [ex], findings=[finding]),
        RequirementResult(should, Status.BLOCKED, "blocked by AP-SCHEMA-001: \x00\x07", [binary]),
    ]
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
    title = page_title((tmp_path / "harness.html").as_uri(), tmp_path / "profile", files=True)
    scroll, client, open_details, characters = title.split(",")
    assert int(scroll) <= int(client) == 1280  # nothing overflows sideways
    assert open_details == "0"  # evidence collapsed by default
    assert characters == "true"  # \u00e9 in the server's JSON is shown as é


def test_the_page_names_the_product_and_holds_no_raw_control_byte() -> None:
    page = render_html(_run())
    assert "Acme Agents 2.4.1" in page
    raw = [hex(ord(c)) for c in page if (ord(c) < 0x20 and c not in "\n\t\r") or 0x7F <= ord(c) <= 0x9F]
    assert raw == [], raw
    assert "\\x1b[31mred\\x7f" in page  # shown escaped, as text


@pytest.mark.parametrize("width", [1280, 390])
def test_at_desktop_and_phone_widths_nothing_overflows_and_level_words_stay_whole(tmp_path: Path, width: int) -> None:
    """SHOULD must never wrap to SHOUL/D; a screenshot of each width is kept for a person to look at."""
    (tmp_path / "report.html").write_text(render_html(_run()), encoding="utf-8")
    (tmp_path / "harness.html").write_text(
        "<!doctype html><html><head><title>pending</title></head><body style='margin:0'>"
        f"<iframe id='r' src='report.html' style='width:{width}px;height:900px;border:0'></iframe><script>"
        "document.getElementById('r').onload=function(){var d=this.contentDocument;"
        "var broken=[].filter.call(d.querySelectorAll('table.reqs td:nth-child(2)'),function(c){"
        "var r=document.createRange();r.selectNodeContents(c);return r.getClientRects().length>1}).length;"
        "document.title=[d.documentElement.scrollWidth,d.documentElement.clientWidth,broken].join(',')};"
        "</script></body></html>",
        encoding="utf-8",
    )
    title = page_title((tmp_path / "harness.html").as_uri(), tmp_path / "profile", files=True)
    scroll, client, broken = map(int, title.split(","))
    assert scroll <= client and width - 20 <= client <= width  # nothing overflows (a scrollbar takes its part)
    assert broken == 0  # each level word on one line
    shot = tmp_path / f"report-{width}.png"
    subprocess.run(
        headless(
            tmp_path / "profile",
            f"--window-size={width},900",
            f"--screenshot={shot}",
            (tmp_path / "report.html").as_uri(),
            files=True,
        ),
        capture_output=True,
        timeout=120,
    )
    assert shot.is_file() and shot.stat().st_size > 1000
