"""document.html: the protocol's document as the run used it, read as a page: its operations first
(method, path, summary, each answer the document names), then the whole document with one anchor
per JSON pointer, so every reference a report names (``openapi.json#/components/schemas/Task``)
links to its section and each operation to its place in it."""

from __future__ import annotations

import json
from html import escape
from typing import Any

from specs.documents import load

from ..verdicts.results import RunResult

STYLE = (
    "body{font:14px/1.45 system-ui,sans-serif;margin:1.5em auto;max-width:1100px;padding:0 1.5em;color:#1d1d1f}"
    "@media (max-width:700px){body{padding:0 .5em}} h1{font-size:1.5em} .meta{color:#555;overflow-wrap:anywhere}"
    "code,pre{font:13px/1.4 ui-monospace,SFMono-Regular,Menlo,monospace}"
    "pre{white-space:break-spaces;overflow-wrap:anywhere;background:#f6f8fa;padding:.6em}"
    ":target{background:#fff3b0;outline:2px solid #e0b000}"
    ".op{border-top:1px solid #ddd;padding:.4em 0} .op h3{margin:.2em 0;font-size:1em;overflow-wrap:anywhere}"
    ".m{display:inline-block;min-width:4.2em;font:600 12px ui-monospace,monospace;text-transform:uppercase;"
    "color:#fff;background:#555;border-radius:3px;padding:.1em .4em;margin-right:.4em;text-align:center}"
    ".m-get{background:#0969da}.m-post{background:#1a7f37}.m-delete{background:#cf222e}.m-put,.m-patch{background:#9a6700}"
    ".op p{margin:.2em 0} .op ul{margin:.2em 0;padding-left:1.4em} .op li{overflow-wrap:anywhere}"
)
METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")


def _pointer(parent: str, key: str | int) -> str:
    return f"{parent}/{str(key).replace('~', '~0').replace('/', '~1')}"


def _walk(value: Any, pointer: str, indent: int, out: list[str]) -> None:
    pad = "  " * indent
    if isinstance(value, dict) and value:
        out.append("{\n")
        for n, (key, item) in enumerate(value.items()):
            child = _pointer(pointer, key)
            out.append(
                f"{pad}  <span id='{escape(child, quote=True)}'>{escape(json.dumps(key, ensure_ascii=False))}</span>: "
            )
            _walk(item, child, indent + 1, out)
            out.append(",\n" if n < len(value) - 1 else "\n")
        out.append(f"{pad}}}")
    elif isinstance(value, list) and value:
        out.append("[\n")
        for n, item in enumerate(value):
            child = _pointer(pointer, n)
            out.append(f"{pad}  <span id='{escape(child, quote=True)}'></span>")
            _walk(item, child, indent + 1, out)
            out.append(",\n" if n < len(value) - 1 else "\n")
        out.append(f"{pad}]")
    else:
        out.append(escape(json.dumps(value, ensure_ascii=False)))


def _operations(raw: Any) -> str:
    """Each operation of the document's ``paths``: method and path (a link to its place in the whole
    document below), summary, and each answer it names with its description."""
    paths = raw.get("paths") if isinstance(raw, dict) else None
    if not isinstance(paths, dict):
        return ""
    out = []
    for path, item in paths.items():
        if not isinstance(item, dict):
            continue
        for method in (m for m in METHODS if isinstance(item.get(m), dict)):
            op = item[method]
            pointer = _pointer(_pointer("/paths", path), method)
            summary = str(op.get("summary") or op.get("description") or "").strip()
            answers = op.get("responses") if isinstance(op.get("responses"), dict) else {}
            items = "".join(
                f"<li><code>{escape(str(code))}</code> "
                f"{escape(str(answer.get('description') or '') if isinstance(answer, dict) else '')}</li>"
                for code, answer in answers.items()
            )
            out.append(
                f"<div class='op'><h3><span class='m m-{method}'>{method}</span>"
                f"<a href='#{escape(pointer, quote=True)}'><code>{escape(str(path))}</code></a></h3>"
                + (f"<p>{escape(summary)}</p>" if summary else "")
                + (
                    f"<p><small>operationId <code>{escape(str(op['operationId']))}</code></small></p>"
                    if op.get("operationId")
                    else ""
                )
                + (f"<ul>{items}</ul>" if items else "")
                + "</div>"
            )
    return f"<h2>Operations ({len(out)})</h2>{''.join(out)}" if out else ""


def render_document(run: RunResult) -> str:
    meta = run.meta.get("spec") or {}
    profile = meta.get("profile") if isinstance(meta, dict) else None
    spec = load(run.protocol, profile)
    name = meta.get("document", run.protocol) if isinstance(meta, dict) else run.protocol
    out: list[str] = []
    _walk(spec.raw, "", 0, out)
    info = spec.raw.get("info") if isinstance(spec.raw, dict) else None
    title = f"{info.get('title')} {info.get('version') or ''}".strip() if isinstance(info, dict) else ""
    return (
        f"<!doctype html><html lang='en'><head><meta charset='utf-8'><meta name='viewport' "
        f"content='width=device-width, initial-scale=1'><title>{escape(str(name))}</title><style>{STYLE}</style>"
        f"</head><body><h1>{escape(title or str(name))}</h1>"
        f"<p class='meta'><code>{escape(str(name))}</code> &middot; sha256 <code>{escape(str(meta.get('sha256', '')))}"
        "</code></p>"
        f"{_operations(spec.raw)}"
        f"<h2 id='document'>The whole document</h2><p>As the run used it; every reference a report names links "
        f"to its place here.</p><pre>{''.join(out)}</pre></body></html>\n"
    )
