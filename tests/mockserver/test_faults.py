"""The fault catalogue's mechanics: every named fault acts through exactly the means it declares."""

from __future__ import annotations

import importlib
from dataclasses import fields

import pytest

from mockserver.faults import PROTOCOL_MODULES, FaultSet, catalogue, resolve


@pytest.mark.parametrize("module_name", sorted(PROTOCOL_MODULES.values()))
def test_every_fault_is_an_edit_a_switch_or_a_server_setting(module_name: str) -> None:
    faults = {f.name: f for f in importlib.import_module(module_name).FAULTS}
    switched = importlib.import_module(f"{module_name}.faults").Switches.fault_names()
    assert set(switched.values()) <= set(faults), "a switch names no fault of the catalogue"
    idle = [
        name
        for name, f in faults.items()
        if name not in switched.values() and f.mutate is None and not f.skip_validation and not f.disables_auth
    ]
    assert idle == [], "faults that nothing switches on"


@pytest.mark.parametrize("module_name", sorted(PROTOCOL_MODULES.values()))
def test_switches_are_off_in_normal_runs_and_each_fault_turns_on_its_own(module_name: str) -> None:
    switches = importlib.import_module(f"{module_name}.faults").Switches
    assert not any(getattr(switches.of(FaultSet()), f.name) for f in fields(switches))
    for field_name, fault in switches.fault_names().items():
        on = switches.of(resolve([fault]))
        assert [f.name for f in fields(switches) if getattr(on, f.name)] == [field_name]


def test_fault_names_are_unique_across_protocols() -> None:
    found = catalogue()
    assert len(found) == sum(len(importlib.import_module(m).FAULTS) for m in PROTOCOL_MODULES.values())
