"""A newcomer's first failing finding, reproduced from summary.md's curl line in one paste, and the
same line first in report.html's finding block; summary.md names the implementation once and
shows the text as it was written."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from conformance.cli.commands import main
from conformance.reporting import render_markdown
from conformance.reporting.combined import render_combined_markdown
from mockserver import EmbeddedServer, MockConfig
from tests.conformance.reporting.test_reporting import make_run

SH_BLOCK = re.compile(r"^(`{3,})sh\n(.*?)\n\1$", re.M | re.S)


def test_the_first_findings_curl_line_reproduces_it_in_one_paste(tmp_path: Path) -> None:
    config = MockConfig(protocols=("agent-protocol",), faults=("ap-404-wrong-shape",))
    with EmbeddedServer(config) as server:
        argv = ["run", "--protocol", "agent-protocol", "--base-url", server.url, "--only", "AP-ERR-001"]
        assert main([*argv, "--phase", "scenario", "-q", "--report-dir", str(tmp_path)]) == 1
        summary = (tmp_path / "summary.md").read_text(encoding="utf-8")
        page = (tmp_path / "report.html").read_text(encoding="utf-8")
        first = SH_BLOCK.search(summary)
        assert first is not None, summary
        curl = first.group(2)
        assert curl.startswith("curl ") and "\n" not in curl and server.url in curl
        # report.html: the same line opens the finding's block, before the script
        block = re.search(r"<details><summary>[^<]*</summary>(.*?)</details>", page, re.S)
        assert block is not None and block.group(1).startswith("<p>To paste:</p><pre class='curl'>curl "), page
        assert block.group(1).index("class='curl'") < block.group(1).index("reproduce/AP-ERR-001-1.sh")
        if shutil.which("curl") is None:
            pytest.skip("curl is not installed: the line is shown, not pasted")
        pasted = subprocess.run(["sh", "-c", curl], capture_output=True, text=True, timeout=30, check=False)
    # the fault's answer comes back: a 404 in the wrong shape ({"detail"}, not {"message"})
    assert pasted.returncode == 0 and pasted.stdout.startswith("HTTP/1.1 404"), pasted.stdout + pasted.stderr
    assert '"detail"' in pasted.stdout and '"message"' not in pasted.stdout


def test_summary_names_the_implementation_once() -> None:
    unnamed = render_markdown(make_run())
    assert unnamed.count("http://127.0.0.1:9") == 1 and "Implementation" not in unnamed
    assert unnamed.splitlines()[2].startswith("Target `http://127.0.0.1:9` | suite 9.9.9")
    named = make_run()
    named.meta = {"target_name": "Acme <Agents> & Co", "target_version": "2.1"}
    head = render_markdown(named).splitlines()[2]
    assert head.startswith("Implementation: **Acme \\<Agents> & Co 2.1** | target `http://127.0.0.1:9`")
    other = make_run()
    other.protocol, other.meta = "neuro-san", named.meta
    combined = render_combined_markdown([named, other], {"agent-protocol": "a", "neuro-san": "n"})
    assert combined.count("Acme \\<Agents> & Co 2.1") == 1  # in the certificate's facts, not again per protocol


def test_summary_shows_text_as_written_and_no_live_html() -> None:
    run = make_run()
    run.results[1].message = "got <b>500</b> & {'a': \"b\"}; &amp; stays text; a\\<i>b"
    row = next(line for line in render_markdown(run).splitlines() if line.startswith("| T-FAIL-001 "))
    assert "got \\<b>500\\</b> & {'a': \"b\"}; \\&amp; stays text; a\\\\\\<i>b" in row
    assert "&lt;" not in row and not re.search(r"(?<!\\)(?:\\\\)*<[a-z/]", row)
