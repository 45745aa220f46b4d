"""report.html: one self-contained page a person reads: summary, each requirement, evidence."""

from __future__ import annotations

import json
import re
from html import escape

from ..check.script import script_name, script_of
from ..check.shown import lone_escaped, page_line
from ..verdicts.results import Exchange, RequirementResult, RunResult, Status
from .clip import clip
from .coverage import coverage_section

STYLE = """
body{font:14px/1.45 system-ui,sans-serif;margin:1.5em auto;max-width:1600px;color:#1d1d1f;padding:0 1.5em}
h1{font-size:1.6em;margin-bottom:.2em} .meta{color:#555}
.verdict{display:inline-block;padding:.2em .7em;border-radius:4px;color:#fff;font-weight:600}
.v-pass{background:#1a7f37}.v-fail{background:#cf222e}.v-error{background:#8250df}
table{border-collapse:collapse;width:100%;margin:1em 0}
th,td{border-bottom:1px solid #ddd;padding:.35em .5em;text-align:left;vertical-align:top}
th{background:#f6f8fa}
.s-passed{color:#1a7f37}.s-failed{color:#cf222e;font-weight:600}.s-not-verified{color:#9a6700}.s-error{color:#8250df;font-weight:600}
.s-expected{color:#9a6700}.s-stale{color:#cf222e;font-weight:600}
.s-blocked{color:#9a6700}.s-advice{color:#0969da}.s-not-scored{color:#57606a}
details{margin:.3em 0} pre{background:#f6f8fa;padding:.6em;overflow:auto;max-height:24em;white-space:break-spaces;
overflow-wrap:anywhere}
code{font-size:.95em;overflow-wrap:anywhere} table.reqs{table-layout:fixed} td{overflow-wrap:anywhere}
table.reqs col.id{width:10em} table.reqs col.lvl{width:5.5em} table.reqs col.res{width:8em}
table.reqs td:nth-child(-n+3){overflow-wrap:normal;white-space:nowrap}
table.reqs td:nth-child(3) small{white-space:normal;overflow-wrap:normal;display:inline-block}
table.facts th{width:9em} table.facts td{overflow-wrap:anywhere}
.scroll{overflow-x:auto} table.tally td,table.tally th{overflow-wrap:normal;white-space:nowrap}
@media (max-width:700px){body{padding:0 .5em}
table.reqs,table.reqs tbody,table.reqs tr,table.reqs td{display:block;width:auto}
table.reqs colgroup,table.reqs tr:first-child{display:none} table.reqs tr{border-bottom:2px solid #ddd;padding:.4em 0}
table.reqs td{border:0;padding:.15em .3em} table.reqs td:nth-child(-n+3){display:inline-block;white-space:nowrap}
table.tally th{white-space:normal;overflow-wrap:normal} table.tally th,table.tally td{padding:.3em .25em}
table.tally{font-size:.92em}
table.cards,table.cards tbody,table.cards tr{display:block} table.cards tr:first-child{display:none}
table.cards tr{border-bottom:2px solid #ddd;padding:.4em 0}
table.cards td{display:inline-block;border:0;padding:.15em .4em} table.cards td:first-child{display:block}
table.cards td[data-label]::before{content:attr(data-label) ": ";color:#555}}
.filters label{margin-right:1em;white-space:nowrap}
.roots li{margin:.3em 0}
@media print{.filters{display:none} body{max-width:none;margin:0} pre{max-height:none}
a{color:inherit;text-decoration:none}}
"""

STATUSES = tuple(s for s in Status if s not in (Status.ADVICE, Status.NOT_SCORED))
"""The verdicts the requirements table filters by (advice and not scored have their own tables)."""
LEVELS = ("must", "should", "may")


def _filter_css() -> str:
    """Filters without script (the page loads nothing and runs nothing): a cleared box hides its rows."""
    rules = [f"body:has(#f-{s.slug}:not(:checked)) tr.st-{s.slug}{{display:none}}" for s in STATUSES]
    rules += [f"body:has(#f-{lv}:not(:checked)) tr.lv-{lv}{{display:none}}" for lv in LEVELS]
    return "\n".join(rules)


def _filters() -> str:
    boxes = [f"<label><input type='checkbox' id='f-{s.slug}' checked> {s.value}</label>" for s in STATUSES]
    boxes += [f"<label><input type='checkbox' id='f-{lv}' checked> {lv.upper()}</label>" for lv in LEVELS]
    return "<p class='filters'>Show: " + "".join(boxes) + "</p>"


_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


def visible(text: str) -> str:
    """Text a page can show: control characters (a binary body's bytes, ANSI escapes) written as
    ``\\xNN``, never as raw bytes; tabs and line breaks stay."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def t(text: str) -> str:
    """Escaped and visible: the one way text from a run reaches the page."""
    return escape(visible(text))


def readable(body: str) -> str:
    """A JSON body shown as its characters (a server's ``\\u00e9`` reads as é), indented."""
    try:
        return lone_escaped(json.dumps(json.loads(body), ensure_ascii=False, indent=2))
    except (ValueError, RecursionError):
        return body


SHOWN_BODY = 4000
"""Characters of a request body the page shows (results.json and the script hold all of it)."""


def _cut(text: str) -> str:
    shown = clip(text, SHOWN_BODY)
    more = len(text) - len(shown) + 1  # the ellipsis stands for one of them
    return shown if shown == text else f"{shown} [{more} more characters: the whole body is in results.json]"


def _exchange(ex: Exchange) -> str:
    req_headers = "\n".join(f"{k}: {v}" for k, v in ex.request_headers.items())
    resp_headers = "\n".join(f"{k}: {v}" for k, v in ex.response_headers.items())
    outcome = f"HTTP {ex.status}" if ex.status is not None else "no response"
    parts = [f"<pre>{t(ex.method)} {t(ex.url)}\n{t(req_headers)}"]
    if ex.request_body:
        parts.append(f"\n\n{t(_cut(readable(ex.request_body)))}")
    content_type = next((v for k, v in ex.response_headers.items() if k.lower() == "content-type"), "")
    line = page_line(ex.response_body or "", html="html" in content_type.lower())
    parts.append("</pre>")
    if line is not None:  # a server's error page: its one useful line first, the markup below
        parts.append(f"<p class='page'>{outcome}: an HTML page, <strong>{t(line)}</strong></p>")
    parts.append(f"<pre>{outcome} ({ex.elapsed_ms:g} ms)\n{t(resp_headers)}")
    if ex.response_body:
        parts.append(f"\n\n{t(readable(ex.response_body))}")
    if ex.error:
        parts.append(f"\n\nerror: {t(ex.error)}")
    parts.append("</pre>")
    return "".join(parts)


def _ref(ref: str) -> str:
    """A reference into a document as a link to that section of the document the suite ships
    (``document.html`` beside the report, one anchor per JSON pointer); any other reference as text."""
    doc, hash_, pointer = ref.partition("#")
    if hash_ and pointer.startswith("/") and "/" in doc and " " not in doc:
        return f"<a href='document.html#{escape(pointer, quote=True)}'>{t(ref)}</a>"
    return t(ref)


def _row(res: RequirementResult, base_url: str) -> str:
    r = res.requirement
    evidence = "".join(_exchange(ex) for ex in res.evidence)
    detail = t(res.message)
    for n, f in enumerate(res.findings, 1):
        script = script_of(f, base_url, state_dependent=bool(r.depends_on_state))
        calls = f"{len(f.evidence)} call{'s' if len(f.evidence) != 1 else ''}"
        deciding = f.deciding
        # the one line to paste first: the call whose answer broke the rule
        paste = (
            f"<p>{'The last call, to paste' if len(f.evidence) > 1 else 'To paste'}:</p>"
            f"<pre class='curl'>{t(deciding.curl)}</pre>"
            if deciding is not None and deciding.curl
            else ""
        )
        reproduce = (
            f"<p>Reproduce from a fresh state ({calls}, the last one's answer broke the rule): "
            f"<code>sh reproduce/{escape(script_name(f, n))} [BASE_URL]</code></p><pre>{t(script)}</pre>"
            if script
            else ""
        )
        detail += (
            f"<details><summary>{f.count}&times; {escape(f.operation)}: {t(clip(f.message, 200))}</summary>"
            f"{paste}{reproduce}</details>"
        )
    if evidence:  # collapsed: the page leads with verdicts, the exchanges are a click away
        detail += f"<details><summary>evidence</summary>{evidence}</details>"
    return (
        f"<tr id='{escape(r.id)}' class='st-{res.status.slug} lv-{r.level.value}'>"
        f"<td><code>{escape(r.id)}</code></td><td>{r.level.value.upper()}</td>"
        f"<td class='s-{res.baseline or res.status.slug}'>{escape(res.verdict)}"
        + (f"<br><small>baseline: {escape(res.baseline_reason)}</small>" if res.baseline else "")
        + (
            f"<br><small title='{escape(r.depends_on_state)}'>depends on the server's state</small>"
            if r.depends_on_state
            else ""
        )
        + "</td>"
        f"<td>{t(r.statement)}<br><small>{_ref(r.ref)}</small></td><td>{detail}</td></tr>"
    )


def _roots(run: RunResult) -> str:
    """Failures grouped by root cause: each failed requirement with the ones its failure blocked."""
    failed = [r for r in run.document if r.status is Status.FAILED]
    if not failed:
        return ""
    items = []
    for res in failed:
        blocked = [b.requirement.id for b in run.results if b.blocked_by == res.requirement.id]
        links = ", ".join(f"<a href='#{escape(b)}'>{escape(b)}</a>" for b in blocked)
        also = f" &middot; blocks {links}" if blocked else ""
        kinds = f"{len(res.findings)} distinct failure(s)" if res.findings else ""
        items.append(
            f"<li><a href='#{escape(res.requirement.id)}'><code>{escape(res.requirement.id)}</code></a> "
            f"{res.requirement.level.value.upper()}: {t(clip(res.message, 200))} <small>{kinds}</small>{also}</li>"
        )
    return f"<h2>Root failures ({len(failed)})</h2><ul class='roots'>{''.join(items)}</ul>"


def _state_dependent(run: RunResult) -> str:
    if not run.state_dependent:
        return ""
    items = "".join(
        f"<li><a href='#{escape(rid)}'><code>{escape(rid)}</code></a>: {t(why)}</li>"
        for rid, why in run.state_dependent.items()
    )
    return (
        "<h2>Verdicts that depend on the server's own state</h2><p>The same seed gives the same verdicts "
        f"except for these, which a second run against the same server may move:</p><ul>{items}</ul>"
    )


def _advice(run: RunResult) -> str:
    """Practice requirements, apart from the verdicts: what real servers do where the document is silent."""
    if not run.practice:
        return ""
    counts = run.advice_tally()
    rows = "".join(_row(r, run.base_url) for r in sorted(run.practice, key=lambda r: r.status is Status.PASSED))
    return (
        "<h2 id='advice'>Advice: practice, not the document</h2>"
        "<p>What real servers and clients are observed to do where the document is silent. Not following it "
        f"never fails a run: {counts['passed']} followed, {counts['advice']} advice.</p>"
        '<table class="reqs"><colgroup><col class="id"><col class="lvl"><col class="res"><col><col></colgroup>'
        f"<tr><th>id</th><th>level</th><th>result</th><th>practice</th><th>detail</th></tr>{rows}</table>"
    )


def _unscored(run: RunResult) -> str:
    """Requirements newer than the scored set: they ran, their verdicts are shown, none counts."""
    if not run.unscored:
        return ""
    rows = "".join(_row(r, run.base_url) for r in run.unscored)
    return (
        f"<h2 id='not-scored'>Not scored: added after {escape(run.requirement_set)}</h2>"
        f"<p>This run scores the frozen set {escape(run.requirement_set)}. These newer requirements ran and "
        "show what they found; none of them counts or decides the exit code.</p>"
        '<table class="reqs"><colgroup><col class="id"><col class="lvl"><col class="res"><col><col></colgroup>'
        f"<tr><th>id</th><th>level</th><th>result</th><th>requirement</th><th>detail</th></tr>{rows}</table>"
    )


def _scored_against(run: RunResult) -> str:
    name = run.requirement_set
    return f"\n&middot; requirements <strong>{escape(name)}</strong> (frozen)" if name else ""


def render_html(run: RunResult) -> str:
    verdict = run.verdict
    klass = {"PASS": "v-pass", "TARGET ERROR": "v-error"}.get(verdict, "v-fail")
    tally = "".join(
        f"<tr><td>{lvl.upper()}</td><td>{c['passed']}</td><td>{c['failed']}</td><td>{c['blocked']}</td>"
        f"<td>{c[Status.NOT_VERIFIED.value]}</td><td>{c['error']}</td></tr>"
        for lvl, c in run.tally().items()
    )
    failing = [r for r in run.document if r.status is not Status.PASSED or r.baseline]
    ordered = failing + [r for r in run.document if r not in failing]
    fatal = f"<p class='s-error'>{t(run.fatal)}</p>" if run.fatal else ""
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Conformance: {t(run.product)} - {escape(run.protocol)}</title>
<style>{STYLE}{_filter_css()}</style></head><body>
<h1>{t(run.product)}: {escape(run.protocol)} conformance
<span class="verdict {klass}">{verdict}</span></h1>
<p class="meta">Implementation <strong>{t(run.product)}</strong> &middot; target <code>{t(run.target)}</code>
&middot; suite {escape(run.suite_version)}{_scored_against(run)}
&middot; seed {run.seed} &middot; level {run.level.value} &middot; {run.duration_s:.1f} s
&middot; started {escape(run.started_at)}</p>
{fatal}
<div class="scroll"><table class="tally"><tr><th>level</th><th>passed</th><th>failed</th><th>blocked</th>
<th>not verified</th><th>error</th></tr>
{tally}</table></div>
<p>Exit code {run.exit_code}: {escape(run.exit_rule)}.</p>
{_roots(run)}
{_state_dependent(run)}
{_filters()}
<table class="reqs"><colgroup><col class="id"><col class="lvl"><col class="res"><col><col></colgroup>
<tr><th>id</th><th>level</th><th>result</th><th>requirement</th><th>detail</th></tr>
{"".join(_row(r, run.base_url) for r in ordered)}
</table>
{_advice(run)}{_unscored(run)}{coverage_section(run)}</body></html>
"""
