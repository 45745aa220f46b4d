"""Distinct failures: each failure of a requirement is grouped by kind and operation, counted, and
keeps the first occurrence's evidence (see ``Finding`` for the stable key)."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit

from specs.documents import Spec

from .reproduction import AT_ONCE, STATUS, overlapping, reproduction, unknown_ids
from .results import Exchange, Finding

_VARIABLE = re.compile(
    r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"  # uuids
    r"|\b[0-9a-fA-F]{16,}\b"  # hex ids
    r"|'(?:[^'\\]|\\.){0,200}'|\"(?:[^\"\\]|\\.){0,200}\""  # quoted values (ids, echoed bodies), escapes and all
    r"|\d+(?:\.\d+)?"  # counts, ports, timings
)


def digest(text: str) -> str:
    """A short digest of ``text`` with its run-specific parts (ids, quoted values, numbers) blanked,
    so the same failure gets the same key in every run."""
    return hashlib.sha1(_VARIABLE.sub("#", text).encode()).hexdigest()[:10]


def _segments(path: str) -> list[str]:
    return [s for s in path.strip("/").split("/") if s] if path.strip("/") else []


def operation_of(spec: Spec, base_url: str, method: str, url: str) -> str:
    """``METHOD /path/template`` of the document operation a request went to, else the raw path."""
    base = urlsplit(base_url).path.rstrip("/")
    path = urlsplit(url).path
    if base and path.startswith(base):
        path = path[len(base) :] or "/"
    got = _segments(path)
    best: tuple[int, str] | None = None
    for op in spec.operations():
        if op.method.upper() != method.upper():
            continue
        want = _segments(op.path)
        if len(want) != len(got):
            continue
        literal = 0
        for w, g in zip(want, got, strict=True):
            if w.startswith("{") and w.endswith("}"):
                continue
            if w != g:
                break
            literal += 1
        else:
            if best is None or literal > best[0]:
                best = (literal, op.label)
    return best[1] if best else f"{method.upper()} {path}"


def operation_named(spec: Spec, message: str) -> str | None:
    """The label of the operation a message names first by its operationId, if any."""
    ids = {op.operation_id: op.label for op in spec.operations() if op.operation_id}
    first = min(
        ((hit.start(), label) for oid, label in ids.items() if (hit := re.search(rf"\b{re.escape(oid)}\b", message))),
        default=None,
    )
    return first[1] if first else None


def scenario_findings(
    spec: Spec,
    base_url: str,
    rid: str,
    failures: Iterable[tuple[str, list[Exchange]]],
    probes: Mapping[int, int] | None = None,
    before: Sequence[Exchange] = (),
    failed: Collection[int] = (),
    statuses: Mapping[int, tuple[str, tuple[int, ...]]] | None = None,
    shown: Collection[int] = (),
    judgments: Mapping[int, tuple[str, str, Mapping[str, Any]]] | None = None,
) -> list[Finding]:
    """A scenario check's failures (each part's, and the one that ended it) as distinct findings,
    each keyed by the operation of the exchange that decided it (the last of the calls handed
    over) and a digest of its message, with the calls that reproduce it from a fresh state.
    ``probes``: where among its calls each failure's own probe began, by its deciding call's
    ``id()`` (``Context.probes``; a failure not listed: its deciding call alone). ``before``: the
    calls earlier checks made, which a reproduction may need too, and ``failed`` the ``id()`` of
    those that were another failure's own (``Context.journal``). ``statuses``: the calls whose
    status alone failed an expectation, with its message and the statuses it accepted
    (``Context.statuses``): a failure with that message (a part's label before it) decided by one
    of them judged the status alone. ``shown``: the ``id()`` of the deciding calls a failure named
    as showing it (``Context.shown``): the finding's ``shown_by`` is their operation. ``judgments``:
    the calls a named judgment failed (``Context.judgments``), with that failure's message, the
    judgment's name and its facts: a finding with that message decided by one of them names them."""
    failures = [(message, calls) for message, calls in failures]
    starts = probes or {}
    own = [calls[starts.get(id(calls[-1]), len(calls) - 1) :] if calls else [] for _, calls in failures]
    earlier = {id(ex) for ex in before}
    found = FindingSet()
    for n, (message, calls) in enumerate(failures):
        last = calls[-1] if calls else None
        operation = operation_of(spec, base_url, last.method, last.url) if last else "(no request)"
        # another failure's calls, in this one's reproduction: causes sent for their effect
        others = [ex for m, probe in enumerate(own) if m != n for ex in probe]
        others += [ex for ex in before if id(ex) in failed]
        kind = f"scenario:{digest(message)}"
        # a fixture's calls where they were made, among the earlier checks'
        history = [*before, *(ex for ex in calls if id(ex) not in earlier)]
        if calls and id(calls[-1]) in earlier:  # it judged a fixture's answer: the calls up to that one
            history = history[: next(i for i, ex in enumerate(history) if ex is calls[-1]) + 1]
        why, accepted = (statuses or {}).get(id(last), ("", ())) if last else ("", ())
        judged = STATUS if why and message.endswith(why) else ""
        said, judgment, facts = (judgments or {}).get(id(last), ("", "", {})) if last else ("", "", {})
        if not (said and message.endswith(said)):
            judgment, facts = "", {}
        found.add(
            rid,
            operation,
            kind,
            message,
            history,
            wrong=others,
            probe=own[n][:-1],
            judged=judged,
            accepted=accepted if judged else (),
            shown_by=operation if last is not None and id(last) in shown else "",
            judgment=judgment,
            facts=facts,
        )
    return found.ordered()


def summary(findings: list[Finding]) -> str:
    """One line for a requirement's verdict: the failure, or how many distinct ones and each."""
    if len(findings) == 1:
        return findings[0].message
    parts = [f"({n}) {f.message}" + (f" [{f.count}x]" if f.count > 1 else "") for n, f in enumerate(findings, 1)]
    return f"{len(findings)} distinct failures: " + "; ".join(parts)


def reproducing(
    finding: Finding,
    calls: list[Exchange],
    wrong: Iterable[Exchange] = (),
    probe: Iterable[Exchange] = (),
    also: Iterable[Exchange] = (),
) -> Finding:
    """``finding`` with the calls among ``calls`` that reproduce it (the last one decided it);
    ``wrong``, ``probe`` and ``also``: calls of another failure, of this one's probe, and the
    answers the deciding one was compared with (``Reproduction``)."""
    if calls:
        rep = reproduction(calls, len(calls) - 1, wrong=wrong, probe=probe, also=also, message=finding.message)
        finding.evidence, finding.captures, finding.baked = rep.steps, rep.captures, rep.baked
        finding.wrong, finding.probe, finding.unsure, finding.also = rep.wrong, rep.probe, rep.unsure, rep.also
        if not finding.unsure and overlapping(calls):  # the calls kept may be one of several sent together
            finding.unsure = AT_ONCE
    return finding


class FindingSet:
    """Findings of one requirement, by key, in the order first seen."""

    def __init__(self) -> None:
        self._by_key: dict[str, Finding] = {}

    def add(
        self,
        rid: str,
        operation: str,
        kind: str,
        message: str,
        calls: Iterable[Exchange],
        *,
        fresh: bool = True,
        wrong: Iterable[Exchange] = (),
        probe: Iterable[Exchange] = (),
        judged: str = "",
        accepted: Iterable[int] = (),
        shown_by: str = "",
        judgment: str = "",
        facts: Mapping[str, Any] | None = None,
    ) -> None:
        """A failure; ``calls`` are those made up to the deciding one (the last), of which the
        finding keeps the ones the failure depends on (``reproduction.reproduction``). ``fresh=False``:
        the calls did not start from a fresh state (traffic a proxy saw), so the ids they send may
        be from before them. ``judged``, ``accepted``, ``shown_by``, ``judgment``, ``facts``: ``Finding``'s."""
        key = f"{rid}|{operation}|{kind}"
        found = self._by_key.get(key)
        if found is not None:
            found.count += 1
        else:
            finding = reproducing(Finding(key, rid, operation, kind, message, 1), list(calls), wrong, probe)
            finding.judged = judged
            finding.accepted = sorted(accepted)
            finding.shown_by = shown_by
            finding.judgment, finding.facts = judgment, dict(facts or {})
            if not fresh:
                finding.baked = sorted(set(finding.baked) | unknown_ids(finding.evidence, finding.captures))
            self._by_key[key] = finding

    def absorb(self, finding: Finding) -> None:
        """Another share's finding (a shard's, a sequence range's): counted in when its key is
        known, kept with its evidence when it is new."""
        found = self._by_key.get(finding.key)
        if found is not None:
            found.count += finding.count
        else:
            self._by_key[finding.key] = finding

    def seen(self) -> list[Finding]:
        """In the order first seen."""
        return list(self._by_key.values())

    def __len__(self) -> int:
        return len(self._by_key)

    def ordered(self) -> list[Finding]:
        """Most frequent first; ties in the order first seen (stable for one seed)."""
        return sorted(self._by_key.values(), key=lambda f: -f.count)
