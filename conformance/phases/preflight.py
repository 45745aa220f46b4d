"""The gate before any requirement: is something speaking the protocol at the base URL?"""

from __future__ import annotations

from collections.abc import Iterable

from specs.documents import Spec

from ..check.http import Client, Limits, TargetError
from ..run.options import RunOptions
from ..run.plan import RunPlan
from ..verdicts.requirements import Requirement
from ..verdicts.results import RequirementResult
from .base import RunState, TargetUnusable


class Preflight:
    name = "preflight"
    gate = True

    def requirements(self, plan: RunPlan) -> tuple[Requirement, ...]:
        return ()

    def run(self, plan: RunPlan, state: RunState) -> Iterable[RequirementResult]:
        options = plan.options
        problem = preflight(options, plan.limits, plan.spec, options.token if plan.suite.needs_auth else None)
        if problem:
            raise TargetUnusable(problem)
        return ()


def preflight(options: RunOptions, limits: Limits, spec: Spec | None = None, token: str | None = None) -> str | None:
    """None when something answers HTTP at the base URL and, given the document, does not answer
    404 to every documented parameterless GET (a wrong --base-url or --protocol), else why not."""
    client = Client(options.base_url, limits, headers={"Authorization": f"Bearer {token}"} if token else None)
    try:
        client.get("/")
        answers = []
        for path in _probes(spec) if spec is not None else ():
            try:
                status = client.get(path).status
            except TargetError:
                return None  # inconclusive: the requirements meet the misbehaviour themselves
            if status != 404:
                return None
            answers.append(f"GET {path} -> 404")
    except TargetError as exc:
        return f"target unreachable or not speaking HTTP: {exc}"
    finally:
        client.close()
    if not answers:
        return None
    assert spec is not None
    hint = ""
    if spec.info.base_path and not options.base_url.rstrip("/").endswith(spec.info.base_path):
        hint = f"; {spec.info.id}'s base URL ends in {spec.info.base_path}"
    return (
        f"the target does not speak {spec.info.id} at {options.base_url}: every documented operation probed "
        f"answered 404 ({', '.join(answers)}); wrong --base-url or --protocol?{hint}"
    )


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
