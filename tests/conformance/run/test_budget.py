"""The run's one time budget: the whole run's deadline, and the phases' shares taken from it."""

from __future__ import annotations

import time

from conformance.run.budget import Budget


def test_the_property_based_phase_gets_half_the_whole_and_the_model_based_half_of_what_is_left() -> None:
    budget = Budget(100.0, started=time.monotonic() - 30.0)  # 30 s already spent
    assert budget.property_based() == 50.0
    assert 69.0 < budget.left() <= 70.0
    assert 34.5 < budget.model_based() <= 35.0


def test_a_spent_budget_leaves_nothing() -> None:
    budget = Budget(10.0, started=time.monotonic() - 60.0)
    assert budget.left() == 0.0 and budget.model_based() == 0.0
