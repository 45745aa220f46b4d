"""Agent Protocol's data stubs: step plans, chosen by the task's input (mockserver/stubs.py)::

    data:
      agent-protocol:
        plans:
          - input: {contains: five}          # a predicate on the task's input; absent: every task
            steps:                           # a count, or each step's name and output
              - {name: Read, output: "Read the task."}
              - {name: Write, output: "Done."}   # the last step writes output.txt with its output

The first plan whose predicate holds is the task's, fixed when the task is created.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ...api import ProtocolApi
from ...fixtures import checked, items_of, text_of
from ...matching import MISSING, MatchError, Test, parse_test
from ...stubs import StubError

MAX_STEPS = 1000


@dataclass(frozen=True, slots=True)
class StubbedPlan:
    input: Test | None
    names: tuple[str, ...]
    outputs: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Data:
    plans: Sequence[StubbedPlan] = ()

    def plan_for(self, task_input: Any) -> StubbedPlan | None:
        for plan in self.plans:
            if plan.input is None or plan.input.holds(task_input if task_input is not None else MISSING, text=True):
                return plan
        return None


def read(where: str, raw: Any, api: ProtocolApi) -> Data:
    raw = checked(where, raw, {"plans"})
    plans = []
    for i, item in enumerate(items_of(f"{where}.plans", raw.get("plans"))):
        at = f"{where}.plans[{i}]"
        item = checked(at, item, {"input", "steps"}, {"steps"})
        try:
            test = parse_test(f"{at}.input", item["input"]) if "input" in item else None
        except MatchError as exc:
            raise StubError(str(exc)) from None
        steps = item["steps"]
        if isinstance(steps, int) and not isinstance(steps, bool):
            if not 1 <= steps <= MAX_STEPS:
                raise StubError(f"{at}.steps: between 1 and {MAX_STEPS}")
            names = tuple(f"Step {n}" for n in range(1, steps + 1))
            outputs = tuple(f"Step {n} of {steps} done." for n in range(1, steps + 1))
        else:
            listed = items_of(f"{at}.steps", steps)
            if not 1 <= len(listed) <= MAX_STEPS:
                raise StubError(f"{at}.steps: between 1 and {MAX_STEPS} steps")
            named = [checked(f"{at}.steps[{j}]", s, {"name", "output"}, {"output"}) for j, s in enumerate(listed)]
            names = tuple(text_of(f"{at}.steps[{j}].name", s.get("name", f"Step {j + 1}")) for j, s in enumerate(named))
            outputs = tuple(text_of(f"{at}.steps[{j}].output", s["output"]) for j, s in enumerate(named))
        plans.append(StubbedPlan(test, names, outputs))
    return Data(tuple(plans))
