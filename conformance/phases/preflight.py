"""The gate before any requirement: is something speaking the protocol at the base URL?

A target is the protocol's server when it gives one answer only servers of that protocol give
(the descriptor's ``signatures``: a documented list, a documented error body). A target that
answers HTTP but gives none is another protocol's server, or the right server at the wrong base
URL: exit 2 with what it answered. An answer that is no answer (a transport error, a 5xx, 408 or
429, a redirect, a body labelled JSON that is not) leaves the question open: the requirements then
meet the misbehaviour themselves.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

from specs.documents import Spec

from ..check.guard import StallGuard
from ..check.http import Client, Limits, Response, TargetError
from ..check.signature import UNKNOWN, Signature
from ..run.options import RunOptions
from ..run.plan import RunPlan
from ..verdicts.requirements import Requirement
from ..verdicts.results import RequirementResult
from .base import RunState, TargetUnusable

HINT = "wrong --base-url or --protocol?"


class Preflight:
    name = "preflight"
    gate = True

    def requirements(self, plan: RunPlan) -> tuple[Requirement, ...]:
        return ()

    def run(self, plan: RunPlan, state: RunState) -> Iterable[RequirementResult]:
        options = plan.options
        token = options.token if plan.suite.needs_auth else None
        problem = preflight(options, plan.limits, plan.spec, token, plan.suite.signatures, state.guard)
        if problem:
            raise TargetUnusable(problem)
        return ()


def preflight(
    options: RunOptions,
    limits: Limits,
    spec: Spec | None = None,
    token: str | None = None,
    signatures: Sequence[Signature] = (),
    guard: StallGuard | None = None,
) -> str | None:
    """None when something answers HTTP at the base URL and, given the document, answers as a
    server of its protocol (or may: an open answer), else why not. ``guard``: the run's stall
    guard, told how each probe ended (a route that stalled here stalls in the phases too)."""
    client = Client(options.base_url, limits, guard=guard)
    auth = {"Authorization": f"Bearer {token}"} if token else {}
    try:
        client.get("/")
        if spec is None:
            return None
        answers = _recognise(client, signatures, auth) if signatures else _documented_gets(client, spec, auth)
    except TargetError as exc:
        return f"target unreachable or not speaking HTTP: {exc}"
    finally:
        client.close()
    if answers is None:
        return None
    hint = ""
    if spec.info.base_path and not options.base_url.rstrip("/").endswith(spec.info.base_path):
        hint = f"; {spec.info.id}'s base URL ends in {spec.info.base_path}"
    return f"the target does not speak {spec.info.id} at {options.base_url}: {'; '.join(answers)}; {HINT}{hint}"


def _recognise(client: Client, signatures: Sequence[Signature], auth: dict[str, str]) -> list[str] | None:
    """None when some answer is one of the protocol's (or leaves the question open), else what each said."""
    answers = []
    for signature in signatures:
        path = signature.path.replace("{unknown}", UNKNOWN)
        headers = auth if signature.authenticated else {}
        try:
            response = client.request(signature.method, path, json=signature.json, headers=headers)
        except TargetError:
            return None  # inconclusive: the requirements meet the misbehaviour themselves
        if response.status >= 500 or response.status in (408, 429) or 300 <= response.status < 400:
            return None  # a server of the protocol may be broken, busy or redirecting: no evidence of another one
        body = _json(response)
        if body is None and "json" in response.content_type:
            return None  # it says JSON and sends something else: a broken answer, the requirements judge it
        if signature.holds(response.status, body):
            return None
        answers.append(f"{signature.method} {path} -> {_brief(response)} (not {signature.what})")
    return answers


def _documented_gets(client: Client, spec: Spec, auth: dict[str, str]) -> list[str] | None:
    """Without signatures: every documented parameterless GET answering 404 is another server."""
    answers = []
    for path in _probes(spec):
        try:
            status = client.get(path, headers=auth).status
        except TargetError:
            return None
        if status != 404:
            return None
        answers.append(f"GET {path} -> 404")
    if not answers:
        return None
    return [f"every documented operation probed answered 404 ({', '.join(answers)})"]


def _json(response: Response) -> Any:
    try:
        return json.loads(response.body)
    except (ValueError, UnicodeDecodeError):
        return None


def _brief(response: Response) -> str:
    return f"{response.status} {response.shown(80)}" if response.body else str(response.status)


def _probes(spec: Spec, most: int = 3) -> list[str]:
    """Documented GETs that need no parameter: any server of the protocol answers them with
    something other than 404."""
    return [
        op.path
        for op in spec.operations()
        if op.method == "get"
        and "{" not in op.path
        and not any(spec.resolve(p).get("required") for p in op.definition.get("parameters", []))
    ][:most]
