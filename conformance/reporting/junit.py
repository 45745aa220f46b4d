"""junit.xml: one testcase per requirement, so CI systems show them natively."""

from __future__ import annotations

import re
from xml.etree import ElementTree as ET

from ..verdicts.results import RequirementResult, RunResult, Status
from .clip import clip

_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _xml(text: str) -> str:
    """XML 1.0 cannot carry most control characters at all, even escaped: a hostile target's body
    (NUL, ANSI escapes) must not make the report unparseable."""
    return _NOT_XML.sub("\ufffd", text)


def render_junit(run: RunResult) -> str:
    """What a CI system shows agrees with the exit code: only a result that decides it (a MUST, or
    any requirement of a selection without one) is a ``<failure>`` or ``<error>``, a gating one not
    verified included; a SHOULD or MAY that failed is reported in ``<system-out>`` and a property,
    never as a failure of a build that exits 0. Testcase names are requirement ids (stable across
    rewordings of the statement); the classname is the protocol."""
    gating = {id(r) for r in run.gating}
    cases = [(res, *_outcome(res, id(res) in gating)) for res in run.results]
    counts = {kind: sum(1 for _, k, _ in cases if k == kind) for kind in ("failure", "error", "skipped")}
    suite = ET.Element(
        "testsuite",
        name=f"conformance.{run.protocol}",
        tests=str(len(cases) + (1 if run.fatal else 0)),
        failures=str(counts["failure"]),
        errors=str(counts["error"] + (1 if run.fatal else 0)),
        skipped=str(counts["skipped"]),
        time=f"{run.duration_s:.3f}",
        timestamp=run.started_at,
    )
    props = ET.SubElement(suite, "properties")
    for key, value in (
        ("target", run.target),
        ("implementation", run.product),
        ("target_name", str(run.meta.get("target_name") or "")),
        ("target_version", str(run.meta.get("target_version") or "")),
        ("seed", str(run.seed)),
        ("suite_version", run.suite_version),
        *((("requirement_set", run.requirement_set),) if run.requirement_set else ()),
        ("exit_code", str(run.exit_code)),
    ):
        ET.SubElement(props, "property", name=key, value=_xml(value))
    if run.fatal:
        case = ET.SubElement(suite, "testcase", classname=run.protocol, name="target")
        ET.SubElement(case, "error", message=_xml(run.fatal))
    for res, kind, message in cases:
        req = res.requirement
        case = ET.SubElement(suite, "testcase", classname=run.protocol, name=req.id, time=f"{res.duration_s:.3f}")
        case_props = ET.SubElement(case, "properties")
        for key, value in (
            ("level", req.level.value),
            ("authority", req.authority.value),
            ("status", res.status.value),
            ("statement", req.statement),
        ):
            ET.SubElement(case_props, "property", name=key, value=_xml(value))
        if kind:
            node = ET.SubElement(case, kind, message=_xml(clip(message, 500)))
            if kind == "failure" or res.baseline == "expected":
                node.text = _xml(_evidence(res))
        elif res.status is Status.ADVICE:  # practice, not the document: shown apart, never failing the build
            ET.SubElement(case, "system-out").text = _xml(
                "advice (practice, not the document; does not decide the exit code): " + _evidence(res)
            )
        elif res.status is not Status.PASSED:  # a non-gating verdict: shown, not failing the build
            ET.SubElement(case, "system-out").text = _xml(
                f"{req.level.value.upper()} requirement {res.status.value} (does not decide the exit code): "
                + _evidence(res)
            )
    ET.indent(suite)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(suite, encoding="unicode") + "\n"


def _outcome(res: RequirementResult, gating: bool) -> tuple[str, str]:
    """The JUnit element for a result ("" for none) and its message."""
    if res.baseline == "expected":  # tolerated like an xfail: shown, not failing the build
        return "skipped", f"expected failure ({res.baseline_reason}): {res.message}"
    if res.baseline == "stale":
        return "failure", f"stale baseline entry: passes now, remove it ({res.baseline_reason})"
    if res.status is Status.PASSED:
        return "", ""
    if res.status is Status.NOT_SCORED:  # newer than the scored set: shown, never counted
        return "skipped", res.message
    if not gating:
        return ("skipped", res.message) if res.status in (Status.NOT_VERIFIED, Status.BLOCKED) else ("", "")
    if res.status is Status.FAILED:
        return "failure", res.message
    if res.status is Status.ERROR:
        return "error", res.message
    level = res.requirement.level.value.upper()
    return "error", f"{res.status.value} (a {level} not verified fails the run): {res.message}"


def _evidence(res: RequirementResult) -> str:
    lines = [res.message]
    for finding in res.findings:
        lines.append(f"[{finding.count}x] {finding.key}: {clip(finding.message, 300)}")
        if finding.deciding is not None and finding.deciding.curl:
            lines.append(f"  {clip(finding.deciding.curl, 2000)}")
    for ex in res.evidence:
        lines.append(f"{ex.method} {ex.url} -> {ex.status if ex.status is not None else ex.error}")
        if ex.response_body:
            lines.append(clip(ex.response_body, 1000))
    return "\n".join(lines)
