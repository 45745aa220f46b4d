"""Traceability tables: each normative statement of a protocol's document, and the requirement
that judges it, or "not judged" with why. Generated from the documents and the registry
(``docs/traceability/<protocol>.md``), never written by hand:

    python -m conformance.reporting.traceability          # write docs/traceability/
    python -m conformance.reporting.traceability --check  # exit 1 when a table is out of step

The statements: every sentence of the document's prose (``description``, ``summary``) holding an
RFC 2119 keyword (MUST, SHOULD, REQUIRED, SHALL, with their negations); every status an operation
fixes (each documented response code but ``default``); every required property of a schema and
every required parameter. A requirement judges a statement when its reference points at it or at
what holds it (the operation, the schema), and for a status, when it names the code too; the
generic schema requirements judge what the property-based phase checks of every exchange (a
response body's schema, a documented status, a violating request rejected).
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from specs.documents import PROTOCOLS, Spec, load, specs_root

from ..run.suites import suite
from ..verdicts.requirements import Authority, Requirement

DOCS = Path(__file__).resolve().parents[2] / "docs" / "traceability"
KEYWORD = re.compile(r"\b(MUST(?: NOT)?|SHOULD(?: NOT)?|REQUIRED|SHALL(?: NOT)?|must(?: not)?|should(?: not)?)\b")
PROSE_KEYS = ("description", "summary")
METHODS = ("get", "put", "post", "delete", "patch", "head", "options")


@dataclass(frozen=True)
class Statement:
    kind: str
    """``prose``, ``status``, ``field`` or ``parameter``."""
    pointer: str
    """Where the document says it (a JSON pointer)."""
    text: str
    judged_by: tuple[str, ...]
    why_not: str = ""


def _escape(part: str) -> str:
    return part.replace("~", "~0").replace("/", "~1")


def _pointer(parts: Sequence[str]) -> str:
    return "/" + "/".join(_escape(p) for p in parts)


def _walk(node: Any, parts: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Any]]:
    yield parts, node
    if isinstance(node, Mapping):
        for key, value in node.items():
            yield from _walk(value, (*parts, str(key)))
    elif isinstance(node, list):
        for n, value in enumerate(node):
            yield from _walk(value, (*parts, str(n)))


def _sentences(text: str) -> list[str]:
    flat = " ".join(text.split())
    return [s.strip() for s in re.split(r"(?<=[.;:!?])\s+(?=[A-Z`(\"'])", flat) if s.strip()]


def _ref_pointer(requirement: Requirement, document: str) -> str | None:
    """The JSON pointer a requirement's reference names in ``document`` (None: it names none there)."""
    for found in re.finditer(r"([\w./-]+)#(/[^\s\]),;]*)", requirement.ref):
        if found.group(1).endswith(document.rsplit("/", 1)[-1]):
            return str(found.group(2))
    return None


def _at(document: Any, pointer: str) -> Any:
    """The node a JSON pointer names (None when it names none)."""
    node = document
    for part in pointer.strip("/").split("/"):
        key = part.replace("~1", "/").replace("~0", "~")
        if isinstance(node, Mapping) and key in node:
            node = node[key]
        elif isinstance(node, list) and key.isdigit() and int(key) < len(node):
            node = node[int(key)]
        else:
            return None
    return node


def _covers(ref: str, pointer: str) -> bool:
    return pointer == ref or pointer.startswith(ref + "/")


class Tracer:
    """One protocol's statements, traced to its registry."""

    def __init__(self, protocol: str) -> None:
        self.spec: Spec = load(protocol)
        self.requirements = [c.requirement for c in suite(protocol).registry]
        document = self.spec.info.document
        self.refs = {r.id: p for r in self.requirements if (p := _ref_pointer(r, document)) is not None}
        self.generic = {r.id.rsplit("-", 1)[-1]: r.id for r in self.requirements if r.phase == "schema"}
        self.request_schemas, self.response_schemas = self._schema_uses()

    def _by_ref(self, pointer: str) -> tuple[str, ...]:
        """The document's requirements whose reference points at ``pointer`` or at what holds it."""
        return tuple(
            r.id
            for r in self.requirements
            if r.authority is Authority.DOCUMENT and (ref := self.refs.get(r.id)) is not None and _covers(ref, pointer)
        )

    def _reach(self, node: Any) -> set[str]:
        """The component schemas ``node`` refers to, through every reference."""
        seen: set[str] = set()
        todo = [node]
        while todo:
            item = todo.pop()
            for _, value in _walk(item):
                if isinstance(value, Mapping) and isinstance(ref := value.get("$ref"), str):
                    name = ref.removeprefix("#/components/schemas/")
                    if name != ref and name not in seen:
                        seen.add(name)
                        todo.append(self.spec.resolve(value))
        return seen

    def _schema_uses(self) -> tuple[set[str], set[str]]:
        """The component schemas reachable from a request body, and from a response."""
        requests: set[str] = set()
        responses: set[str] = set()
        for op in self.spec.operations():
            requests |= self._reach(op.definition.get("requestBody"))
            requests |= self._reach(op.definition.get("parameters"))
            responses |= self._reach(op.definition.get("responses"))
        return requests, responses

    def _cited(self, schema: str) -> list[str]:
        """The document's scenario requirements whose reference holds component ``schema`` (through references)."""
        found = []
        for r in self.requirements:
            ref = self.refs.get(r.id)
            if ref is None or r.authority is Authority.PRACTICE or r.phase == "schema":
                continue
            node = _at(self.spec.raw, ref)
            if ref == f"/components/schemas/{schema}" or schema in self._reach(node):
                found.append(r.id)
        return found

    def statements(self) -> list[Statement]:
        return [*self._prose(), *self._statuses(), *self._fields(), *self._parameters()]

    def _prose(self) -> Iterator[Statement]:
        for parts, value in _walk(self.spec.raw):
            if not parts or parts[-1] not in PROSE_KEYS or not isinstance(value, str):
                continue
            if "properties" in parts[-2:-1]:
                continue  # a property named "description" is no prose
            pointer = _pointer(parts)
            for sentence in _sentences(value):
                if not KEYWORD.search(sentence):
                    continue
                judged = self._by_ref(pointer)
                if "authenticat" in sentence and (auth := self.generic.get("010")):
                    judged = (*judged, auth)  # the generic check that unauthenticated calls are refused
                why = "" if judged else "no requirement's reference points at this prose or what holds it"
                yield Statement("prose", pointer, sentence, judged, why)

    def _statuses(self) -> Iterator[Statement]:
        for op in self.spec.operations():
            for code, answer in (op.definition.get("responses") or {}).items():
                if str(code) == "default":
                    continue
                parts = ("paths", op.path, op.method, "responses", str(code))
                pointer = _pointer(parts)
                # a check judges the status when its reference is the answer itself (or inside it), or
                # is the operation and the status is its success (what a scenario drives) or is named
                operation = _pointer(parts[:3])
                success = str(code).startswith("2")
                named = tuple(
                    r.id
                    for r in self.requirements
                    if r.authority is Authority.DOCUMENT
                    and r.phase != "schema"
                    and (ref := self.refs.get(r.id)) is not None
                    and (
                        _covers(pointer, ref)
                        or (_covers(ref, operation) and (success or re.search(rf"\b{code}\b", r.statement)))
                    )
                )
                generic = tuple(g for g in (self.generic.get("002"), self.generic.get("005")) if g)
                description = " ".join(str((self.spec.resolve(answer) or {}).get("description") or "").split())
                text = f"answers {code}" + (f" ({description})" if description else "")
                why = "" if named else "no check provokes it: only the generic checks judge it when a case meets it"
                yield Statement("status", op.label, text, (*named, *generic), why)

    def _fields(self) -> Iterator[Statement]:
        for parts, node in _walk(self.spec.raw):
            if not isinstance(node, Mapping) or not isinstance(node.get("required"), list):
                continue
            if not isinstance(node.get("properties"), Mapping) or "parameters" in parts:
                continue
            pointer = _pointer(parts)
            owner = parts[2] if parts[:2] == ("components", "schemas") else ""
            in_request = "requestBody" in parts or owner in self.request_schemas
            in_response = "responses" in parts or owner in self.response_schemas
            for name in node["required"]:
                # a check judges the field when its reference is the schema (or inside it), or holds
                # the schema and its statement names the field
                judged = [
                    r.id
                    for r in self.requirements
                    if r.authority is Authority.DOCUMENT
                    and r.phase != "schema"
                    and (ref := self.refs.get(r.id)) is not None
                    and (_covers(pointer, ref) or (_covers(ref, pointer) and re.search(rf"\b{name}\b", r.statement)))
                ]
                judged += [rid for rid in (self._cited(owner) if owner else []) if rid not in judged]
                if in_response and (g := self.generic.get("005")):
                    judged.append(g)
                if in_request and (g := self.generic.get("006")):
                    judged.append(g)
                why = "" if judged else "the schema is in no request or response of an operation"
                yield Statement("field", _label(self.spec, parts), f"`{name}` is required", tuple(judged), why)

    def _parameters(self) -> Iterator[Statement]:
        for op in self.spec.operations():
            shared = (self.spec.raw.get("paths") or {}).get(op.path, {}).get("parameters") or []
            for param in [*shared, *(op.definition.get("parameters") or [])]:
                resolved = self.spec.resolve(param)
                if not isinstance(resolved, Mapping) or not resolved.get("required") or resolved.get("in") == "path":
                    continue  # a path parameter is required by the path itself
                judged = tuple(g for g in (self.generic.get("006"),) if g)
                why = "" if judged else "no requirement sends a request without it"
                text = f"{resolved.get('in')} parameter `{resolved.get('name')}` is required"
                yield Statement("parameter", op.label, text, judged, why)

    def render(self) -> str:
        statements = self.statements()
        info = self.spec.info
        judged = [s for s in statements if s.judged_by]
        lines = [
            f"# Traceability: {info.id}",
            "",
            f"Each normative statement of `specs/{info.document}` and the requirement that judges it, or "
            '"not judged" with why. Generated from the document and the registry by '
            "`python -m conformance.reporting.traceability` (do not edit: "
            "`tests/conformance/reporting/test_traceability.py` fails when it is out of step).",
            "",
            f"{len(statements)} statements, {len(judged)} judged, {len(statements) - len(judged)} not judged. "
            f"`{info.prefix}-SCHEMA-NNN` are the generic requirements the property-based phase decides on every "
            "exchange it makes: they judge a status or a field only when a generated case meets it.",
        ]
        for kind, title, head in (
            ("prose", "Prose: MUST, SHOULD, REQUIRED", "| where | statement | judged by |"),
            ("status", "Statuses each operation fixes", "| where | statement | judged by |"),
            ("field", "Required properties", "| where | statement | judged by |"),
            ("parameter", "Required parameters", "| where | statement | judged by |"),
        ):
            rows = [s for s in statements if s.kind == kind]
            lines += ["", f"## {title}", ""]
            if not rows:
                lines.append("None in this document.")
                continue
            lines += [head, "|---|---|---|"]
            for s in rows:
                by = ", ".join(s.judged_by) if s.judged_by else f"not judged: {s.why_not}"
                lines.append(f"| `{_cell(s.pointer)}` | {_cell(s.text)} | {by} |")
        traced = {rid for s in statements for rid in s.judged_by}
        lines += [
            "",
            "## Requirements",
            "",
            "Each requirement of the registry, and where it stands: the statements above it judges, or what "
            "else it rests on (its reference).",
            "",
            "| id | level | authority | judges | reference |",
            "|---|---|---|---|---|",
        ]
        for r in self.requirements:
            count = sum(r.id in s.judged_by for s in statements)
            judges = f"{count} statement(s) above" if r.id in traced else "none above"
            lines.append(f"| {r.id} | {r.level.value.upper()} | {r.authority.value} | {judges} | {_cell(r.ref, 160)} |")
        return "\n".join(lines) + "\n"


def _label(spec: Spec, parts: tuple[str, ...]) -> str:
    """Where a schema sits, as a reader names it: ``schema Task``, ``POST /ap/v1/agent/tasks 200 body``,
    then the way down (``.artifacts[]``)."""
    if parts[:2] == ("components", "schemas"):
        head, rest = f"schema {parts[2]}", parts[3:]
    elif parts[:1] == ("paths",) and len(parts) > 3:
        where = "request body" if parts[3] == "requestBody" else f"{parts[4]} body" if parts[3] == "responses" else ""
        head = f"{parts[2].upper()} {spec.info.base_path}{parts[1]} {where}".rstrip()
        rest = parts[parts.index("schema") + 1 :] if "schema" in parts else ()
    else:
        return " ".join(parts)
    down, n = "", 0
    while n < len(rest):
        if rest[n] == "properties" and n + 1 < len(rest):
            down, n = f"{down}.{rest[n + 1]}", n + 2
        elif rest[n] == "items":
            down, n = f"{down}[]", n + 1
        elif rest[n] in ("allOf", "anyOf", "oneOf") and n + 1 < len(rest):
            n += 2  # one part of a combined schema: the same object
        else:
            down, n = f"{down}/{rest[n]}", n + 1
    return head + (f" {down}" if down else "")


def _cell(text: str, limit: int = 400) -> str:
    text = " ".join(text.split()).replace("|", "\\|")
    return text if len(text) <= limit else text[: limit - 3].rstrip() + "..."


def index(protocols: Sequence[str]) -> str:
    rows = [f"| [{pid}]({pid}.md) | `specs/{PROTOCOLS[pid].document}` |" for pid in protocols]
    return (
        "\n".join(
            [
                "# Traceability tables",
                "",
                "One table per protocol: each normative statement of its document (each MUST or SHOULD of its prose, "
                "each status an operation fixes, each required property and parameter) and the requirement that "
                'judges it, or "not judged" with why. Generated from the documents and the registry by '
                "`python -m conformance.reporting.traceability`; a test fails when one is out of step.",
                "",
                "| protocol | document |",
                "|---|---|",
                *rows,
            ]
        )
        + "\n"
    )


def built_in() -> list[str]:
    """The protocols whose documents this repository holds (not one an installed package adds)."""
    return sorted(p for p in PROTOCOLS if (specs_root() / p).is_dir())


def pages(protocols: Sequence[str] | None = None) -> dict[str, str]:
    """Every page of ``docs/traceability/``, by file name."""
    ids = sorted(protocols or built_in())
    out = {f"{pid}.md": Tracer(pid).render() for pid in ids}
    out["README.md"] = index(ids)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="write (or --check) docs/traceability/")
    parser.add_argument("--check", action="store_true", help="exit 1 when a page is out of step")
    args = parser.parse_args(argv)
    stale = []
    for name, text in pages().items():
        path = DOCS / name
        if path.is_file() and path.read_text(encoding="utf-8") == text:
            continue
        if args.check:
            stale.append(name)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
    if stale:
        print(f"out of step: {', '.join(stale)} (python -m conformance.reporting.traceability)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
