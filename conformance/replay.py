"""``conformance replay REPORT``: re-send a report's failing requests and say whether each still fails.

The way a vendor checks a fix. A property-based finding is replayed by re-sending its recorded
requests (the chain that led to it, then the failing one) exactly as they were sent and judging
the answer again by the finding's requirement: a 5xx, an undocumented status or content type, a
body off its schema; for the rest (invalid input accepted, valid input refused, a stateful
check), by the status the report recorded. A scenario finding is replayed by running its
requirement's whole scenario again, since its verdict depends on the exchanges it makes.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import httpx

from specs.documents import Spec, load
from specs.schemas import SchemaSet

from .run.options import RunOptions
from .verdicts.findings import operation_of
from .verdicts.results import Exchange, Status

STILL_FAILS, FIXED, UNREACHABLE = "still fails", "fixed", "no answer"

_OWN_HEADERS = frozenset({"host", "content-length", "connection", "transfer-encoding"})


class ReplayError(Exception):
    """The report cannot be replayed (unreadable, another format, no base URL to send to)."""


@dataclass(frozen=True, slots=True)
class Replayed:
    key: str
    requirement: str
    recorded_status: int | None
    status: int | None
    verdict: str
    detail: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "requirement": self.requirement,
            "recorded_status": self.recorded_status,
            "status": self.status,
            "verdict": self.verdict,
            "detail": self.detail,
        }


def load_report(path: Path) -> dict[str, Any]:
    file = path / "results.json" if path.is_dir() else path
    try:
        data = json.loads(file.read_text("utf-8"))
    except (OSError, ValueError) as exc:
        raise ReplayError(f"cannot read {file}: {exc}") from exc
    if not isinstance(data, dict) or not isinstance(data.get("requirements"), list):
        raise ReplayError(f"{file} is not a conformance results.json")
    version = data.get("format_version")
    if not isinstance(version, int) or version < 2:
        raise ReplayError(f"{file} has format_version {version!r}; replay needs 2 or later (it records findings)")
    return data


def rebase(url: str, recorded_base: str, base_url: str) -> str:
    if base_url and recorded_base and url.startswith(recorded_base.rstrip("/")):
        return base_url.rstrip("/") + url[len(recorded_base.rstrip("/")) :]
    return url


def resend(client: httpx.Client, exchange: Exchange, recorded_base: str, base_url: str) -> httpx.Response:
    """The recorded request again, its headers and body as sent (a body that was cut short in
    the report cannot be resent faithfully and is refused)."""
    body = exchange.sent_body
    if body is None and exchange.request_body is not None:
        raise ReplayError(f"{exchange.method} {exchange.url}: the report holds only the start of its body")
    headers = {k: v for k, v in exchange.request_headers.items() if k.lower() not in _OWN_HEADERS}
    url = rebase(exchange.url, recorded_base, base_url)
    return client.request(exchange.method, url, headers=headers, content=body)


def judge_schema(
    spec: Spec, schemas: SchemaSet, rid: str, exchange: Exchange, resp: httpx.Response, recorded_base: str
) -> str:
    """Why the answer still breaks requirement ``rid`` ("" when it no longer does)."""
    number = rid.rsplit("-", 1)[-1]
    if number == "001":
        return f"HTTP {resp.status_code}" if resp.status_code >= 500 else ""
    label = operation_of(spec, recorded_base, exchange.method, exchange.url)
    op = next((o for o in spec.operations() if o.label == label), None)
    if op is None or number not in ("002", "003", "005"):
        return f"HTTP {resp.status_code}, as recorded" if resp.status_code == exchange.status else ""
    responses = op.definition.get("responses", {})
    code = str(resp.status_code)
    documented = next((responses[k] for k in (code, f"{code[0]}XX", "default") if k in responses), None)
    if number == "002":
        return "" if documented is not None else f"HTTP {code} is not documented for {label}"
    content = (spec.resolve(documented) or {}).get("content") or {} if documented is not None else {}
    media = resp.headers.get("content-type", "").split(";", 1)[0].strip().lower()
    if number == "003":
        return "" if not content or media in content else f"Content-Type {media!r} is not one of {sorted(content)}"
    schema = content.get(media, {}).get("schema") if media in content else None
    if schema is None or "json" not in media:
        return ""
    try:
        problems = schemas.violations(schema, resp.json())
    except ValueError:
        return "the body is not JSON"
    return "; ".join(map(str, problems[:3]))


def replay(
    report: dict[str, Any],
    *,
    only: Iterable[str] = (),
    base_url: str = "",
    token: str | None = None,
    second_token: str | None = None,
    timeout: float = 10.0,
) -> list[Replayed]:
    protocol = str(report.get("protocol"))
    spec_meta = report.get("spec") or {}
    spec = load(protocol, spec_meta.get("profile") if isinstance(spec_meta, dict) else None)
    schemas = SchemaSet(spec.raw)
    recorded_base = str(report.get("base_url") or "")
    target = base_url or recorded_base
    if not target:
        raise ReplayError("the report records no base URL: pass --base-url")
    prefixes = tuple(only)
    out: list[Replayed] = []
    with httpx.Client(timeout=timeout, follow_redirects=False) as client:
        for req in report["requirements"]:
            rid = str(req.get("id"))
            if prefixes and not rid.startswith(prefixes):
                continue
            findings = req.get("findings") or []
            if not findings:
                continue
            if req.get("phase") != "schema":  # a scenario's (or model's) verdict needs its whole run
                out += _rerun(report, rid, str(req.get("phase")), findings, target, token, second_token, timeout)
                continue
            for finding in findings:
                out.append(_resend_finding(client, spec, schemas, rid, finding, recorded_base, target))
    return out


def _resend_finding(
    client: httpx.Client,
    spec: Spec,
    schemas: SchemaSet,
    rid: str,
    finding: dict[str, Any],
    recorded_base: str,
    target: str,
) -> Replayed:
    chain = [Exchange.from_dict(e) for e in finding.get("evidence") or []]
    key = str(finding.get("key"))
    if not chain:
        return Replayed(key, rid, None, None, UNREACHABLE, "the finding records no request")
    deciding = chain[-1]
    try:
        for step in chain[:-1]:
            resend(client, step, recorded_base, target)
        resp = resend(client, deciding, recorded_base, target)
    except (httpx.HTTPError, ReplayError) as exc:
        return Replayed(key, rid, deciding.status, None, UNREACHABLE, f"{type(exc).__name__}: {exc}")
    why = judge_schema(spec, schemas, rid, deciding, resp, recorded_base)
    return Replayed(key, rid, deciding.status, resp.status_code, STILL_FAILS if why else FIXED, why)


def _rerun(
    report: dict[str, Any],
    rid: str,
    phase: str,
    findings: list[dict[str, Any]],
    target: str,
    token: str | None,
    second_token: str | None,
    timeout: float,
) -> list[Replayed]:
    """The requirement's scenario (or model sequences) once more; each recorded finding still fails
    while the new run finds it again (its key), and is fixed when the run passes or no longer
    meets it."""
    from .runner import run

    options = RunOptions(
        protocol=str(report["protocol"]),
        base_url=target,
        token=token,
        second_token=second_token,
        seed=int(report.get("seed") or 0),
        timeout=timeout,
        profile=(report.get("spec") or {}).get("profile"),
        phases=(phase,),
    )
    result = run(replace(options, only=(rid,)))
    res = next((r for r in result.results if r.requirement.id == rid), None)
    keys = [(str(f.get("key")), f.get("status")) for f in findings]
    if result.fatal or res is None:
        return [Replayed(key, rid, recorded, None, UNREACHABLE, result.fatal or "not run") for key, recorded in keys]
    last = res.evidence[-1].status if res.evidence else None
    if res.status is Status.PASSED:
        return [Replayed(key, rid, recorded, last, FIXED, "the scenario passed") for key, recorded in keys]
    if res.status is not Status.FAILED:
        return [Replayed(key, rid, recorded, last, res.status.value, res.message) for key, recorded in keys]
    found = {f.key: f for f in res.findings}
    out = []
    for key, recorded in keys:
        again = found.get(key)
        if again is not None:
            status = again.deciding.status if again.deciding else last
            out.append(Replayed(key, rid, recorded, status, STILL_FAILS, again.message))
        else:
            why = f"not met again; the scenario still fails: {res.message}"
            out.append(Replayed(key, rid, recorded, last, FIXED, why))
    return out
