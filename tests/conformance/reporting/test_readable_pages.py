"""What the pages say, apart from how they lay out (test_page_boxes.py): document.html lists the
document's operations and keeps every JSON pointer's anchor; the combined certificate names the
embedded mock once, without its ports; a long request body in report.html ends at a word."""

from __future__ import annotations

import re

from conformance.reporting.combined import render_combined_html
from conformance.reporting.document import render_document
from conformance.reporting.html import SHOWN_BODY, _cut
from conformance.verdicts.requirements import Level
from conformance.verdicts.results import RunResult


def _run(protocol: str, target: str = "http://127.0.0.1:9") -> RunResult:
    return RunResult(protocol, target, "1", 0, Level.MAY, "2026-01-01T00:00:00+00:00")


def test_document_html_lists_each_operation_and_keeps_every_anchor() -> None:
    page = render_document(_run("agent-protocol"))
    ops = re.findall(r"<span class='m m-(\w+)'>\w+</span><a href='#([^']+)'><code>([^<]+)</code>", page)
    assert ("post", "/paths/~1ap~1v1~1agent~1tasks/post", "/ap/v1/agent/tasks") in ops
    assert len(ops) == 9  # the document's nine operations, each once
    for _, pointer, _ in ops:  # each links to its place in the whole document below
        assert f"id='{pointer}'" in page
    assert "<code>422</code> Unable to process request." in page  # an answer the document names
    assert "id='/components/schemas/Task'" in page  # the anchors reports link to are still there


def test_the_certificate_names_the_embedded_mock_once_without_its_ports() -> None:
    runs = [
        _run(p, f"embedded reference mock (http://127.0.0.1:{port})")
        for p, port in (("agent-protocol", 40001), ("neuro-san", 40002))
    ]
    page = render_combined_html(runs, {r.protocol: r.protocol for r in runs})
    assert "<th>implementation</th><td>embedded reference mock</td>" in page
    assert "40001" not in page and "40002" not in page
    named = _run("neuro-san", "http://127.0.0.1:40003")
    named.meta = {"target_name": "Acme", "target_version": "2"}
    page = render_combined_html([named], {"neuro-san": "neuro-san"})
    assert "<th>implementation</th><td>Acme 2</td>" in page


def test_a_long_body_is_cut_at_a_word_with_an_ellipsis() -> None:
    body = "word " * (SHOWN_BODY // 5) + "tail " * 40
    shown = _cut(body)
    head, _, note = shown.partition("… [")
    assert (
        head.endswith("word") and note == f"{len(body) - len(head)} more characters: the whole body is in results.json]"
    )
    assert _cut("short") == "short"
