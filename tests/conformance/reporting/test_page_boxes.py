"""The pages a buyer reads, as a real browser lays them out (headless Chromium): a failing run's
report.html, the combined certificate of a ``--protocol all`` run and document.html, each at a
desktop (1280 px) and a phone (390 px) width. Measured on element boxes, not only pictured: no two
sibling boxes (elements or runs of text) overlap, no text spills out of the box that holds it (over
its neighbour), no element is wider than the viewport and the page never scrolls sideways, with
every collapsed block (a finding, the evidence) opened. A
screenshot of each page at each width is kept under the test's tmp dir for a person to look at.

The runs are real ones, each made once for the module: the suite against the reference mock with
a fault (so the report has findings), and against the embedded mock for every protocol."""

from __future__ import annotations

import html
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from mockserver.target import serve
from tests.chromium import CHROMIUM, MISSING, page_dom, screenshot

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason=MISSING)

FAULT = "ap-page-ignores-current-page"
"""Fails the paging requirements, which also carry the "depends on the server's state" label."""
WIDTHS = (1280, 390)

MEASURE = """
function measure(d){
  [].forEach.call(d.querySelectorAll('details'),function(x){x.open=true});
  var vw=d.documentElement.clientWidth, out={client:vw, scroll:d.scrollingElement.scrollWidth,
    wide:[], overlaps:[], spills:[]};
  function name(n){var e=n.nodeType===1?n:n.parentElement, c=typeof e.className==='string'&&e.className;
    return e.tagName.toLowerCase()+(e.id?'#'+e.id:'')+(c?'.'+c.trim().split(/\\s+/).join('.'):'')+
      ' "'+(n.textContent||'').trim().replace(/\\s+/g,' ').slice(0,60)+'"'}
  function frags(n){var rs;if(n.nodeType===3){var r=d.createRange();r.selectNodeContents(n);rs=r.getClientRects()}
    else rs=n.getClientRects();return [].filter.call(rs,function(r){return r.width>0.5&&r.height>0.5})}
  function hit(a,b){return Math.min(a.right,b.right)-Math.max(a.left,b.left)>1&&
    Math.min(a.bottom,b.bottom)-Math.max(a.top,b.top)>1}
  function skip(e){return e.namespaceURI!=='http://www.w3.org/1999/xhtml'||/^(COL|COLGROUP|BR)$/.test(e.tagName)}
  [].forEach.call(d.body.querySelectorAll('*'),function(e){
    if(skip(e))return;
    var r=e.getBoundingClientRect();
    if(r.width>0&&(r.right>vw+1||r.left<-1))out.wide.push(name(e)+' '+Math.round(r.left)+'..'+Math.round(r.right));
    if(e.scrollWidth>e.clientWidth+1&&getComputedStyle(e).overflowX!=='visible')
      out.wide.push(name(e)+' scrolls sideways: '+e.scrollWidth+'>'+e.clientWidth);
    var boxes=[];
    [].forEach.call(e.childNodes,function(c,i){
      if(c.nodeType===3?!c.textContent.trim():(c.nodeType!==1||skip(c)))return;
      frags(c).forEach(function(f){boxes.push([i,f,c])})});
    boxes.sort(function(a,b){return a[1].top-b[1].top});
    for(var i=0;i<boxes.length;i++)for(var j=i+1;j<boxes.length&&boxes[j][1].top<boxes[i][1].bottom;j++)
      if(boxes[i][0]!==boxes[j][0]&&hit(boxes[i][1],boxes[j][1]))
        out.overlaps.push(name(boxes[i][2])+' / '+name(boxes[j][2]));
  });
  var walk=d.createTreeWalker(d.body,NodeFilter.SHOW_TEXT),n;
  while((n=walk.nextNode())){
    if(!n.textContent.trim())continue;
    var b=n.parentElement;
    while(b&&/^(inline|contents)$/.test(getComputedStyle(b).display))b=b.parentElement;
    if(!b||skip(b))continue;
    var br=b.getBoundingClientRect();
    frags(n).forEach(function(f){if(f.right>br.right+1||f.left<br.left-1)
      out.spills.push(name(n)+' outside '+name(b)+' '+Math.round(f.right)+'>'+Math.round(br.right))});
  }
  ['wide','overlaps','spills'].forEach(function(k){out[k]=out[k].filter(function(x,i,a){return a.indexOf(x)===i})
    .slice(0,15)});
  return out}
"""


def _run(*args: str, report_dir: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "conformance", "run", "--depth", "smoke", "--report-dir", str(report_dir), *args],
        capture_output=True,
        text=True,
        timeout=400,
        check=False,
    )
    assert (report_dir / "report.html").is_file(), done.stdout[-2000:] + done.stderr[-2000:]


@pytest.fixture(scope="module")
def failing(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The report folder of a failing run (report.html and document.html)."""
    folder = tmp_path_factory.mktemp("failing")
    with serve("agent-protocol", faults=(FAULT,)) as server:
        _run("--protocol", "agent-protocol", "--base-url", server.url, report_dir=folder)
    return folder


@pytest.fixture(scope="module")
def combined(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The combined report folder of a ``--protocol all`` run against the embedded mock."""
    folder = tmp_path_factory.mktemp("all")
    # a few requirements per protocol: the certificate's rows, not the checks, are under test here
    only = ("AP-PAGE-001", "NS-CONN-001", "SGR-SVC-001", "SYN-SESS-001")
    _run("--protocol", "all", *(a for rid in only for a in ("--only", rid)), report_dir=folder)
    return folder


PAGES = {
    "report": ("failing", "report.html"),
    "combined": ("combined", "report.html"),
    "document": ("failing", "document.html"),
}
"""Each page: the run (fixture) that writes it, its file. A worker of ``-n`` makes only the runs its pages need."""


def _framed(page: Path, width: int, script: str = "") -> Path:
    """A page beside ``page`` showing it in a frame ``width`` px wide: a headless window is never
    narrower than about 500 px, a frame is as narrow as asked."""
    harness = page.with_name(f"{'measure' if script else 'show'}-{page.stem}-{width}.html")
    harness.write_text(
        "<!doctype html><html><head><title>pending</title></head><body style='margin:0'>"
        f"<iframe id='r' src='{page.name}' style='width:{width}px;height:1600px;border:0'></iframe>"
        f"<pre id='out'></pre><script>{script}</script></body></html>",
        encoding="utf-8",
    )
    return harness


def _measure(page: Path, width: int, profile: Path) -> dict[str, Any]:
    harness = _framed(
        page,
        width,
        MEASURE + "document.getElementById('r').onload=function(){document.getElementById('out').textContent="
        "JSON.stringify(measure(this.contentDocument));document.title='measured'};",
    )
    dom = page_dom(harness.as_uri(), profile, budget_ms=10000, files=True)
    found = re.search(r"<pre id=\"out\">(.*?)</pre>", dom, re.S)
    assert found is not None and found.group(1), dom[-2000:]
    measured: dict[str, Any] = json.loads(html.unescape(found.group(1)))
    return measured


@pytest.mark.slow  # a headless Chromium per page
@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("kind", ["report", "combined", "document"])
def test_no_box_overlaps_or_overflows(request: pytest.FixtureRequest, kind: str, width: int, tmp_path: Path) -> None:
    run, name = PAGES[kind]
    page: Path = request.getfixturevalue(run) / name
    shot = tmp_path / f"{kind}-{width}.png"  # as a reader first sees it: collapsed blocks closed
    screenshot(_framed(page, width).as_uri(), tmp_path / "profile", shot, max(width + 20, 500))
    m = _measure(page, width, tmp_path / "profile")
    assert width - 20 <= m["client"] <= width  # the frame is as wide as asked (a scrollbar takes its part)
    found = [f"{k}: {x}" for k in ("overlaps", "spills", "wide") for x in m[k]]
    assert found == [], "\n".join(found)  # each names the element, its text and where its box ends
    assert m["scroll"] <= m["client"], m  # the page never scrolls sideways
