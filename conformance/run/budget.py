"""The run's time budget: one object, owned by the runner, that says when the whole run must end
and what share of it each phase that bounds itself gets."""

from __future__ import annotations

import time
from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class Budget:
    seconds: float
    """The whole run's (``--budget``), loading the suite included; the watchdog ends the run at
    ``started + seconds`` whatever is under way."""
    started: float = field(default_factory=time.monotonic)
    """When the run started (``time.monotonic()``)."""

    def left(self) -> float:
        return max(self.seconds - (time.monotonic() - self.started), 0.0)

    def property_based(self) -> float:
        """The property-based phase's share: half of the whole budget."""
        return self.seconds / 2

    def model_based(self) -> float:
        """The model-based phase's share: half of what the earlier phases left; the scenarios get
        the rest."""
        return self.left() / 2
