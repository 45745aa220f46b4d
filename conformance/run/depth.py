"""``--depth``: named campaigns, each a stated amount of work and what it costs.

A depth sets the generated cases per operation and stage (``--max-examples``), the model-based
phase's sequences and their length, and the whole run's budget; an explicit ``--max-examples`` or
``--budget`` still wins. What each covers and costs on a 2-core machine: docs/usage.md (measured
with bench/campaign.py). ``deep`` and ``soak`` are meant to be sharded (``--shard K/N``).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Depth:
    name: str
    max_examples: int
    """Generated cases per operation and stage of the property-based phase."""
    model_sequences: int
    """Sequences of the model-based phase (in seed ranges of ``shards.MODEL_CHUNK``)."""
    model_step_factor: int
    """Each sequence's length: the protocol model's own step count times this."""
    budget_s: float
    """The whole run's time budget."""


DEPTHS = {
    d.name: d
    for d in (
        Depth("smoke", max_examples=3, model_sequences=5, model_step_factor=1, budget_s=300.0),
        Depth("default", max_examples=10, model_sequences=5, model_step_factor=1, budget_s=600.0),
        Depth("deep", max_examples=100, model_sequences=40, model_step_factor=2, budget_s=3600.0),
        Depth("soak", max_examples=1000, model_sequences=400, model_step_factor=4, budget_s=6 * 3600.0),
    )
}
DEFAULT = DEPTHS["default"]
INDEPENDENT_DEPTHS = ("deep", "soak")
"""The depths meant to be sharded: each unit of work draws its cases on its own (no values fed from
other operations' answers), so N shards draw exactly the single run's cases (docs/usage.md)."""


def model_sequences(max_examples: int) -> int:
    """Sequences for an explicit ``--max-examples`` without a depth: half of it, at least 5 (the
    default run's 10 gives 5, the count the self-check's runs are shown to catch every fault with)."""
    return max(5, max_examples // 2)
