"""scripts/test_timeline.py reads a run's junit as tests/conftest.py writes it."""

from __future__ import annotations

from pathlib import Path

import pytest

from scripts.test_timeline import cases, main

JUNIT = """<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest">
<testcase classname="tests.interop.test_peer" name="test_judged" time="90.0"><properties>
<property name="setup_cpu_s" value="30.5"/><property name="started" value="100.0"/>
<property name="worker" value="gw0"/><property name="cpu_s" value="0.0"/>
<property name="teardown_cpu_s" value="1.5"/></properties></testcase>
<testcase classname="tests.test_plain" name="test_call" time="2.0"><properties>
<property name="started" value="120.0"/><property name="worker" value="gw1"/>
<property name="cpu_s" value="1.25"/></properties></testcase>
</testsuite></testsuites>
"""


def test_a_tests_cpu_is_its_call_setup_and_teardown_as_its_wall_time_is(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = tmp_path / "report.xml"
    report.write_text(JUNIT, encoding="utf-8")
    peer, plain = cases(report)
    # the peer's server and the suite's run against it are its module fixture's: its setup
    assert (peer.module, peer.cpu, peer.wall) == ("tests.interop.test_peer", 32.0, 90.0)
    assert (plain.cpu, plain.worker) == (1.25, "gw1")
    main([str(report)])
    out = capsys.readouterr().out
    assert out.startswith("2 tests: 92 s of wall time, 33 s of CPU, summed")
    assert "    90.0     32.0      1  tests.interop.test_peer" in out
