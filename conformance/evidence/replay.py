"""``conformance replay REPORT``: run each finding's reproduction against a target and say, per
finding, **reproduced**, **not reproduced** or **inconclusive**.

A finding carries the calls that reproduce it from a fresh state (``sequence.py``). Replay sends
them in order, each id taken from today's answers where the recorded one was, and judges:

- a setup call (a write, or a call whose answer gives a later one its id) that does not answer as
  it did (a 2xx that is now a 4xx), or an id that cannot be found in today's answer: **inconclusive**;
  the finding's own call never ran as recorded, so its answer cannot say anything;
- the deciding answer is the recorded one (its status, and its body with today's ids named and
  what every run makes anew blanked; its status alone when that is all the check judged, a 200
  where a 401 was due; for a property-based finding, the requirement judged again on the answer:
  still a 5xx, still undocumented, still off its schema): **reproduced**;
- otherwise **not reproduced**, unless a call sent a value an earlier run's answer gave that no
  call of today's made (an id from the old run) and got 404 or 410: then **inconclusive**, since
  the server may simply no longer hold it. Replay never calls a finding fixed on an answer that
  cannot tell.

A finding a named judgment decided (``Finding.judgment``: page arithmetic, ...) is not compared:
its deciding answer is judged again by that judgment (``check/judgments``), with the run's facts
and today's ids in place of the recorded ones. It still shows the problem: **reproduced**,
whatever else moved (ids, times, items others added); it holds: **not reproduced** (inconclusive
when the recorded answers showed state the calls did not make: a total_pages rounded down shows
only at some lengths of the list, and today's may not be one). The calls
before it must still be made as recorded (a setup call's kind of answer, the ids it gives), else
**inconclusive**, saying which and why. A finding whose judgment is not re-runnable (none named,
or one this kit does not know) is compared as above, and its detail says so.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import httpx

from conformance.check.credentials import NONE, Credentials
from conformance.check.http import GAP_S, tls_context
from conformance.check.judgments import JUDGMENTS, Seen, judge, renamed
from conformance.check.script import cut_short, expected, observed
from conformance.check.shown import shown
from conformance.verdicts.findings import operation_of
from conformance.verdicts.reproduction import (
    Reproduction,
    compared,
    fill,
    find,
    outside_state,
    pauses,
    required,
    sent_at_once,
    stale_facts,
    template,
    unknown_ids,
)
from conformance.verdicts.results import Capture, Exchange
from specs.documents import Spec, load
from specs.schemas import SchemaSet

REPRODUCED, NOT_REPRODUCED, INCONCLUSIVE = "reproduced", "not reproduced", "inconclusive"
_OWN_HEADERS = frozenset({"host", "content-length", "connection", "transfer-encoding"})
_GONE = (404, 410)


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
        raise ReplayError(f"{file} has format_version {shown(version)}; replay needs 2 or later (it records findings)")
    return data


def judge_schema(
    spec: Spec, schemas: SchemaSet, rid: str, exchange: Exchange, resp: httpx.Response, recorded_base: str
) -> str | None:
    """Why the answer still breaks generic schema requirement ``rid`` ("" when it no longer does;
    None when this requirement is not judged from one answer: the recorded answer decides)."""
    number = rid.rsplit("-", 1)[-1]
    if number == "001":
        return f"HTTP {resp.status_code}" if resp.status_code >= 500 else ""
    label = operation_of(spec, recorded_base, exchange.method, exchange.url)
    op = next((o for o in spec.operations() if o.label == label), None)
    if op is None or number not in ("002", "003", "005"):
        return None
    code = str(resp.status_code)
    documented = spec.response(op, resp.status_code)
    if number == "002":
        return "" if documented is not None else f"HTTP {code} is not documented for {label}"
    content = (documented.get("content") or {}) if documented is not None else {}
    media = resp.headers.get("content-type", "").split(";", 1)[0].strip().lower()
    if number == "003":
        return (
            ""
            if not content or media in content
            else f"Content-Type {shown(media)} is not one of {shown(sorted(content))}"
        )
    schema = content.get(media, {}).get("schema") if media in content else None
    if schema is None or "json" not in media:
        return ""
    try:
        problems = schemas.violations(schema, resp.json())
    except ValueError:
        return "the body is not JSON"
    return "; ".join(map(str, problems[:3]))


def reproduction_of(finding: dict[str, Any]) -> Reproduction:
    """A recorded finding's calls and captures. A report of format 2 kept only the last few calls
    and no captures: every server-made value it sends is the old run's."""
    steps = [Exchange.from_dict(e) for e in finding.get("evidence") or []]
    captures = [Capture.from_dict(c) for c in finding.get("captures") or []]
    baked = [str(v) for v in finding.get("baked") or []]
    if "captures" not in finding:
        baked = sorted(unknown_ids(steps, captures))
    wrong, probe = ([int(n) for n in finding.get(k) or []] for k in ("wrong", "probe"))
    unsure = str(finding.get("unsure") or "")
    also = [int(n) for n in finding.get("also") or []]
    judged = str(finding.get("judged") or "")
    accepted = [int(n) for n in finding.get("accepted") or []]
    judgment, facts = str(finding.get("judgment") or ""), finding.get("facts")
    return Reproduction(
        steps,
        captures,
        baked,
        wrong=wrong,
        probe=probe,
        unsure=unsure,
        also=also,
        judged=judged,
        accepted=accepted,
        judgment=judgment,
        facts=dict(facts) if isinstance(facts, dict) else {},
    )


def replay(
    report: dict[str, Any],
    *,
    only: Iterable[str] = (),
    keys: Iterable[str] = (),
    base_url: str = "",
    timeout: float = 10.0,
    credentials: Credentials = NONE,
) -> list[Replayed]:
    """Each finding of ``report`` (of the requirements ``only`` names; ``keys``: only these
    findings) sent again, in order, to ``base_url`` (else the recorded target), with the tokens the
    report names by variable taken from ``credentials``."""
    protocol = str(report.get("protocol"))
    spec_meta = report.get("spec") or {}
    spec = load(protocol, spec_meta.get("profile") if isinstance(spec_meta, dict) else None)
    schemas = SchemaSet(spec.raw)
    recorded_base = str(report.get("base_url") or "")
    target = base_url or recorded_base
    if not target:
        raise ReplayError("the report records no base URL: pass --base-url")
    prefixes, wanted = tuple(only), set(keys)
    chosen = [
        (req, reproduction_of(finding), str(finding.get("key")))
        for req in report["requirements"]
        if not prefixes or str(req.get("id")).startswith(prefixes)
        for finding in req.get("findings") or []
        if not wanted or finding.get("key") in wanted
    ]
    missing = credentials.missing(ex for _, rep, _ in chosen for ex in rep.steps)
    if missing:
        given = " and ".join(f"--{name.lower().replace('_', '-')}" for name in missing)
        raise ReplayError(
            f"the findings send the run's {' and '.join(missing)} (the report names it, never holds it): "
            f"give {given}, or set {' and '.join(missing)} in the environment"
        )
    out: list[Replayed] = []
    with httpx.Client(timeout=timeout, follow_redirects=False, verify=tls_context()) as client:
        for req, rep, key in chosen:
            rid = str(req.get("id"))
            rep.state_dependent = bool(req.get("depends_on_state"))
            if not rep.steps:
                out.append(Replayed(key, rid, None, None, INCONCLUSIVE, "the finding records no call"))
                continue
            judge = _schema_judge(spec, schemas, rid, recorded_base) if req.get("phase") == "schema" else None
            out.append(_replay_one(client, rep, key, rid, recorded_base, target, judge, credentials))
    return out


Judge = Any  # Callable[[Exchange, httpx.Response], str | None]


def _schema_judge(spec: Spec, schemas: SchemaSet, rid: str, recorded_base: str) -> Judge:
    def judge(exchange: Exchange, resp: httpx.Response) -> str | None:
        return judge_schema(spec, schemas, rid, exchange, resp, recorded_base)

    return judge


def _replay_one(
    client: httpx.Client,
    rep: Reproduction,
    key: str,
    rid: str,
    recorded_base: str,
    target: str,
    judge: Judge,
    credentials: Credentials,
) -> Replayed:
    deciding = rep.steps[-1]
    recorded_status = deciding.status
    values: dict[str, str] = {}
    base = recorded_base.rstrip("/")
    judged = compared(rep)
    waits = pauses(rep)
    sent_baked: list[str] = []
    differ: list[str] = []
    # the deciding answer is judged again, nothing compared (unless its facts name an old id)
    rejudge = rep.judgment in JUDGMENTS and not stale_facts(rep)
    for index, ex in enumerate(rep.steps):
        if index:  # the time the recorded run left the server before this call (at least as the suite's client)
            time.sleep(max(waits[index], GAP_S))
        relative = bool(base) and ex.url.startswith(base)
        url = (target.rstrip("/") if relative else "") + credentials.fill(
            fill(template(ex.url[len(base) :] if relative else ex.url, rep.captures, index), values)
        )
        raw = ex.sent_body
        if raw is None and ex.request_body is not None:
            why = f"call {index + 1}: the report kept only the start of its body"
            return Replayed(key, rid, recorded_status, None, INCONCLUSIVE, why)
        # latin-1: each byte one character, so a binary body goes through whole; ids and tokens are ASCII
        body = credentials.fill(fill(template(raw.decode("latin-1"), rep.captures, index), values)) if raw else None
        headers = {k: credentials.fill(v) for k, v in ex.request_headers.items() if k.lower() not in _OWN_HEADERS}
        sent_baked += [v for v in rep.baked if v in url or (body and v in body)]
        try:
            resp = client.request(ex.method, url, headers=headers, content=body.encode("latin-1") if body else None)
        except httpx.HTTPError as exc:
            if index == len(rep.steps) - 1 and ex.error:  # the recorded failure: no whole answer came
                why = f"no whole answer again ({type(exc).__name__}), as recorded: {ex.error}"
                return Replayed(key, rid, recorded_status, None, REPRODUCED, why)
            why = f"call {index + 1}: no answer ({type(exc).__name__}: {exc})"
            return Replayed(key, rid, recorded_status, None, INCONCLUSIVE, why)
        last = index == len(rep.steps) - 1
        if required(rep, index) and not _same_class(resp.status_code, ex.status):
            call = f"setup call {index + 1} ({ex.method} {_path(url)})"
            why = f"{call} answered {resp.status_code}, recorded {ex.status}" + _gone(sent_baked, resp.status_code)
            return Replayed(key, rid, recorded_status, None, INCONCLUSIVE, why)
        for capture in (c for c in rep.captures if c.step == index):
            found = find(capture, resp.text, resp.headers.multi_items())
            if not found and not capture.used:
                continue  # only named where it stands: its absence is a difference the comparison shows
            if not found:
                why = f"answer {index + 1} (HTTP {resp.status_code}, recorded {ex.status}) carries no {capture.key} "
                if index in rep.probe and not outside_state(rep):  # the failure's own call answered otherwise
                    why += f"for the calls after it: the failure's own call {index + 1} answered otherwise"
                    return Replayed(key, rid, recorded_status, None, NOT_REPRODUCED, why)
                return Replayed(key, rid, recorded_status, None, INCONCLUSIVE, why + f"to take {capture.name} from")
            values[capture.name] = found
        if last and rejudge:
            return _rejudged(
                rep,
                key,
                rid,
                deciding,
                Seen(ex.method, url, resp.status_code, resp.headers, resp.content),
                values,
                sent_baked,
            )
        if rejudge:
            continue
        if last and ex.error:  # the recorded failure was that no whole answer came; one came
            differ.append(
                f"call {index + 1}: a whole answer came (HTTP {resp.status_code}); the recorded call got none"
            )
        elif index in judged:
            seen = observed(rep, index, resp.status_code, resp.headers.multi_items(), resp.content, values, credentials)
            if seen != expected(rep, index):
                differ.append(
                    f"call {index + 1} ({ex.method} {_path(url)}): {_first_difference(expected(rep, index), seen)}"
                )
        if last:
            out = _verdict(rep, key, rid, deciding, resp, differ, sent_baked, judge)
            return replace(out, detail=out.detail + _compared(rep)) if judge is None else out
    raise AssertionError("unreachable: the last call returns")


def _rejudged(
    rep: Reproduction,
    key: str,
    rid: str,
    deciding: Exchange,
    seen: Seen,
    values: dict[str, str],
    sent_baked: list[str],
) -> Replayed:
    """The deciding answer judged again by the finding's judgment, the run's facts naming today's ids."""
    names = {c.value: values[c.name] for c in rep.captures if c.used and c.name in values}
    if sent_baked and seen.status in _GONE and deciding.status not in _GONE:
        # an old run's id answered "no such object": today's answer is not about what was judged
        detail = f"the deciding call answered {seen.status}, recorded {deciding.status}"
        return Replayed(key, rid, deciding.status, seen.status, INCONCLUSIVE, detail + _gone(sent_baked, seen.status))
    problems = judge(rep.judgment, seen, renamed(rep.facts, names))
    if sent_at_once(rep):  # what one after another shows, either way, is not what the race showed
        detail = f"{rep.judgment}: {problems[0]}" if problems else f"the judgment {rep.judgment} holds"
        detail += "; the recorded calls were sent at the same moment (a race): a replay sends them one after another"
        return Replayed(key, rid, deciding.status, seen.status, INCONCLUSIVE, detail)
    if problems:
        return Replayed(key, rid, deciding.status, seen.status, REPRODUCED, f"{rep.judgment}: {problems[0]}")
    detail = f"the judgment {rep.judgment} holds on today's answer (HTTP {seen.status})"
    if sent_baked:  # an old run's value, gone or read otherwise: the answer may not be about the same thing
        return Replayed(
            key, rid, deciding.status, seen.status, INCONCLUSIVE, detail + _gone(sent_baked, seen.status or 0)
        )
    if outside_state(rep):  # a list another length, say: a rule broken only at some lengths cannot show
        detail += (
            "; the recorded answers also showed objects these calls did not make, so another state answers otherwise"
        )
        return Replayed(key, rid, deciding.status, seen.status, INCONCLUSIVE, detail)
    return Replayed(key, rid, deciding.status, seen.status, NOT_REPRODUCED, detail)


def _first_difference(want: str, got: str) -> str:
    for a, b in zip(want.split("\n"), got.split("\n"), strict=False):
        if a != b:
            return f"recorded {shown(a[:120])}, now {shown(b[:120])}"
    return "recorded and new answers differ in length"


def _verdict(
    rep: Reproduction,
    key: str,
    rid: str,
    deciding: Exchange,
    resp: httpx.Response,
    differ: list[str],
    sent_baked: list[str],
    judge: Judge,
) -> Replayed:
    now = resp.status_code
    why = judge(deciding, resp) if judge is not None else None
    if why:  # the requirement judged again on today's answer: still broken
        return Replayed(key, rid, deciding.status, now, REPRODUCED, why)
    if why is None and sent_at_once(rep):
        detail = "the recorded calls were sent at the same moment (a race): a replay sends them one after another"
        return Replayed(key, rid, deciding.status, now, INCONCLUSIVE, detail)
    if why is None and not differ and cut_short(rep):
        detail = (
            "the answers are the recorded ones as far as the report kept the last (what broke the rule may lie past it)"
        )
        return Replayed(key, rid, deciding.status, now, INCONCLUSIVE, detail)
    if why is None and not differ:
        return Replayed(key, rid, deciding.status, now, REPRODUCED, "the answers are the recorded ones")
    detail = "; ".join(differ) if why is None else f"the requirement holds on this answer (HTTP {now})"
    # an old run's value: gone, or (nothing judged again on today's answer) read otherwise, as a cursor
    if sent_baked and (now in _GONE or why is None):
        return Replayed(key, rid, deciding.status, now, INCONCLUSIVE, detail + _gone(sent_baked, now))
    if why is None and outside_state(rep):
        detail += (
            "; the recorded answers also showed objects these calls did not make, so another state answers otherwise"
        )
        return Replayed(key, rid, deciding.status, now, INCONCLUSIVE, detail)
    return Replayed(key, rid, deciding.status, now, NOT_REPRODUCED, detail)


def _compared(rep: Reproduction) -> str:
    """What a compared (not judged again) finding's detail says of why."""
    if rep.judgment in JUDGMENTS:
        stale = ", ".join(stale_facts(rep))
        return f" (compared with the recorded answers: {rep.judgment}'s facts name {stale}, made by the recorded run)"
    if rep.judgment:
        return f" (compared with the recorded answers: this kit has no judgment {rep.judgment})"
    return " (compared with the recorded answers: the check that decided it names no re-runnable judgment yet)"


def _gone(baked: list[str], status: int) -> str:
    if not baked:
        return ""
    sent = ", ".join(dict.fromkeys(baked))
    if status not in _GONE:
        return f"; it sent {sent} from the recorded run, which this server may read otherwise"
    return f"; it sent {sent} from the recorded run, which this server may no longer hold"


def _same_class(now: int, recorded: int | None) -> bool:
    """A setup call answered as it must for the calls after it: a success still a success (a write
    the recording saw refused made nothing, so whatever it answers now is compared, not required)."""
    return recorded is not None and (recorded >= 400 or now // 100 == recorded // 100)


def _path(url: str) -> str:
    from urllib.parse import urlsplit

    return urlsplit(url).path
