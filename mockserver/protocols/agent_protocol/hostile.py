"""Agent Protocol's hostile faults (``mockserver/hostile.py``): a null step body that runs a step,
a lone surrogate that breaks every answer holding it, and their passing control."""

from __future__ import annotations

from ...faults import Fault, fault_maker
from ...hostile_faults import hostile_faults
from .faults import PROTOCOL

FAULTS: tuple[Fault, ...] = hostile_faults(
    fault_maker(PROTOCOL),
    "ap",
    null_body=(
        "step-null-body-runs",
        "executeAgentTaskStep",
        ("AP-ERR-004", "AP-SCHEMA-006"),
        "a step POST reads its body as `body or {}`: a null or [] body executes a step",
    ),
    surrogate=(
        "lone-surrogate-breaks-lists",
        "createAgentTask",
        ("AP-HOSTILE-001",),
        "a task's input keeps a lone surrogate (\\ud800) as sent; every answer holding it then fails to "
        "encode as UTF-8 (500): the create, the task and every task list that shows it",
        ("getAgentTask", "listAgentTasks"),
    ),
)
