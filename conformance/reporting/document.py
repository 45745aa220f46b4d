"""document.html: the protocol's document as the run used it, one anchor per JSON pointer, so every
reference a report names (``openapi.json#/components/schemas/Task``) links to its section."""

from __future__ import annotations

import json
from html import escape
from typing import Any

from specs.documents import load

from ..verdicts.results import RunResult

STYLE = (
    "body{font:13px/1.4 ui-monospace,SFMono-Regular,Menlo,monospace;margin:1em;color:#1d1d1f}"
    "pre{white-space:pre-wrap;overflow-wrap:anywhere} :target{background:#fff3b0;outline:2px solid #e0b000}"
    "h1{font:600 1.3em system-ui,sans-serif}"
)


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


def render_document(run: RunResult) -> str:
    meta = run.meta.get("spec") or {}
    profile = meta.get("profile") if isinstance(meta, dict) else None
    spec = load(run.protocol, profile)
    name = meta.get("document", run.protocol) if isinstance(meta, dict) else run.protocol
    out: list[str] = []
    _walk(spec.raw, "", 0, out)
    return (
        f"<!doctype html><html lang='en'><head><meta charset='utf-8'><meta name='viewport' "
        f"content='width=device-width, initial-scale=1'><title>{escape(str(name))}</title><style>{STYLE}</style>"
        f"</head><body><h1>{escape(str(name))}</h1><p>sha256 {escape(str(meta.get('sha256', '')))}</p>"
        f"<pre>{''.join(out)}</pre></body></html>\n"
    )
