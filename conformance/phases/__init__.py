"""The phases of a run, in order: the preflight (a gate), then the property-based, model-based and
scenario phases, each deciding its share of the plan's requirements (``base.Phase``)."""

from __future__ import annotations

from .base import Phase, RunState, TargetUnusable
from .model.phase import ModelPhase
from .preflight import Preflight
from .scenario import ScenarioPhase
from .schema.phase import SchemaPhase

PHASES: tuple[Phase, ...] = (Preflight(), SchemaPhase(), ModelPhase(), ScenarioPhase())

__all__ = ["PHASES", "ModelPhase", "Phase", "Preflight", "RunState", "ScenarioPhase", "SchemaPhase", "TargetUnusable"]
