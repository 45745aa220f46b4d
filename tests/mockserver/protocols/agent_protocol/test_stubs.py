"""Agent Protocol's data stubs: step plans chosen by the task's input."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any

import httpx
import pytest

from mockserver import EmbeddedServer, MockConfig, create_app
from mockserver.stubs import StubError

Serve = Callable[..., AbstractContextManager[EmbeddedServer]]
PLANS = {
    "plans": [
        {"input": {"contains": "five"}, "steps": 5},
        {"input": {"matches": "^essay"}, "steps": [{"name": "Draft", "output": "A draft."}, {"output": "The essay."}]},
    ]
}


def run(c: httpx.Client, task_input: str) -> list[dict[str, Any]]:
    task = c.post("/ap/v1/agent/tasks", json={"input": task_input}).json()["task_id"]
    steps = []
    for _ in range(20):
        steps.append(c.post(f"/ap/v1/agent/tasks/{task}/steps", json={}).json())
        if steps[-1]["is_last"]:
            return steps
    raise AssertionError("no last step")


def test_a_plan_is_chosen_by_the_input(serve: Serve) -> None:
    with (
        serve(protocols=("agent-protocol",), stubs={"data": {"agent-protocol": PLANS}}) as server,
        httpx.Client(base_url=server.url) as c,
    ):
        five = run(c, "do it in five steps")
        assert [s["name"] for s in five] == [f"Step {n}" for n in range(1, 6)]
        assert [s["output"] for s in five][-1] == "Step 5 of 5 done."
        assert [s["is_last"] for s in five] == [False] * 4 + [True]
        [artifact] = five[-1]["artifacts"]  # the last step writes its output, as every plan's does
        task = five[0]["task_id"]
        download = c.get(f"/ap/v1/agent/tasks/{task}/artifacts/{artifact['artifact_id']}")
        assert download.content == b"Step 5 of 5 done."
        essay = run(c, "essay on owls")
        assert [(s["name"], s["output"]) for s in essay] == [("Draft", "A draft."), ("Step 2", "The essay.")]
        assert len(run(c, "write hello")) == 4  # no plan holds: the built-in plan
        c.put("/__mock/stubs", json={})  # the data stubs go with the stubs
        assert len(run(c, "do it in five steps")) != 5


@pytest.mark.parametrize(
    ("plans", "message"),
    [
        ({"plans": [{"steps": 0}]}, r"data\.agent-protocol\.plans\[0\]\.steps: between 1 and 1000"),
        ({"plans": [{"steps": [{"name": "x"}]}]}, r"data\.agent-protocol\.plans\[0\]\.steps\[0\]: missing output"),
        ({"plans": [{"input": {"matches": "("}, "steps": 1}]}, r"data\.agent-protocol\.plans\[0\]\.input\.matches"),
        ({"plan": []}, r"data\.agent-protocol: unknown field\(s\) plan"),
    ],
)
def test_a_bad_plan_is_refused_with_the_path(plans: Any, message: str) -> None:
    with pytest.raises(StubError, match=f"^{message}"):
        create_app(MockConfig(protocols=("agent-protocol",), stubs={"data": {"agent-protocol": plans}}))
