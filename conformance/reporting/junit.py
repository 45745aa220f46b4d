"""junit.xml: one testcase per requirement, so CI systems show them natively."""

from __future__ import annotations

import re
from xml.etree import ElementTree as ET

from ..results import RequirementResult, RunResult, Status

_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _xml(text: str) -> str:
    """XML 1.0 cannot carry most control characters at all, even escaped: a hostile target's body
    (NUL, ANSI escapes) must not make the report unparseable."""
    return _NOT_XML.sub("\ufffd", text)


def render_junit(run: RunResult) -> str:
    tally = {s: sum(1 for r in run.results if r.status is s) for s in Status}
    expected, stale = sum(r.baseline == "expected" for r in run.results), len(run.stale)
    suite = ET.Element(
        "testsuite",
        name=f"conformance.{run.protocol}",
        tests=str(len(run.results) + (1 if run.fatal else 0)),
        failures=str(tally[Status.FAILED] - expected + stale),
        errors=str(tally[Status.ERROR] + (1 if run.fatal else 0)),
        skipped=str(tally[Status.SKIPPED] + tally[Status.BLOCKED] + expected),
        time=f"{run.duration_s:.3f}",
        timestamp=run.started_at,
    )
    props = ET.SubElement(suite, "properties")
    for key, value in (("target", run.target), ("seed", str(run.seed)), ("suite_version", run.suite_version)):
        ET.SubElement(props, "property", name=key, value=_xml(value))
    if run.fatal:
        case = ET.SubElement(suite, "testcase", classname=run.protocol, name="target")
        ET.SubElement(case, "error", message=_xml(run.fatal))
    for res in run.results:
        req = res.requirement
        case = ET.SubElement(
            suite,
            "testcase",
            classname=f"{run.protocol}.{req.level.value}",
            name=f"{req.id} {req.statement}",
            time=f"{res.duration_s:.3f}",
        )
        if res.baseline == "expected":  # tolerated like an xfail: shown, not failing the build
            node = ET.SubElement(
                case, "skipped", message=_xml(f"expected failure ({res.baseline_reason}): {res.message}"[:500])
            )
            node.text = _xml(_evidence(res))
        elif res.baseline == "stale":
            ET.SubElement(
                case,
                "failure",
                message=_xml(f"stale baseline entry: passes now, remove it ({res.baseline_reason})"[:500]),
            )
        elif res.status is Status.FAILED:
            node = ET.SubElement(case, "failure", message=_xml(res.message[:500]))
            node.text = _xml(_evidence(res))
        elif res.status is Status.ERROR:
            ET.SubElement(case, "error", message=_xml(res.message[:500]))
        elif res.status in (Status.SKIPPED, Status.BLOCKED):
            ET.SubElement(case, "skipped", message=_xml(res.message[:500]))
    ET.indent(suite)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(suite, encoding="unicode") + "\n"


def _evidence(res: RequirementResult) -> str:
    lines = [res.message]
    for finding in res.findings:
        lines.append(f"[{finding.count}x] {finding.key}: {finding.message[:300]}")
        if finding.deciding is not None and finding.deciding.curl:
            lines.append(f"  {finding.deciding.curl[:2000]}")
    for ex in res.evidence:
        lines.append(f"{ex.method} {ex.url} -> {ex.status if ex.status is not None else ex.error}")
        if ex.response_body:
            lines.append(ex.response_body[:1000])
    return "\n".join(lines)
