"""The fault catalogue's mechanics: every named fault acts through exactly the means it declares."""

from __future__ import annotations

from dataclasses import fields

import pytest

from mockserver import FaultSet, catalogue, discover, resolve
from mockserver.descriptor import descriptors, mocked


@pytest.mark.parametrize("protocol_id", mocked())
def test_every_fault_is_an_edit_a_switch_or_a_server_setting(protocol_id: str) -> None:
    mock = discover(protocol_id)
    faults = {f.name: f for f in mock.faults}
    switched = mock.switches.fault_names() if mock.switches is not None else {}
    assert set(switched.values()) <= set(faults), "a switch names no fault of the catalogue"
    idle = [
        name
        for name, f in faults.items()
        if name not in switched.values() and f.mutate is None and not f.skip_validation and not f.disables_auth
    ]
    assert idle == [], "faults that nothing switches on"


@pytest.mark.parametrize("protocol_id", mocked())
def test_switches_are_off_in_normal_runs_and_each_fault_turns_on_its_own(protocol_id: str) -> None:
    switches = discover(protocol_id).switches
    if switches is None:
        pytest.skip(f"{protocol_id} switches no behaviour")
    assert not any(getattr(switches.of(FaultSet()), f.name) for f in fields(switches))
    for field_name, fault in switches.fault_names().items():
        on = switches.of(resolve([fault]))
        assert [f.name for f in fields(switches) if getattr(on, f.name)] == [field_name]


def test_fault_names_are_unique_across_protocols() -> None:
    found = catalogue()
    assert len(found) == sum(len(mock.faults) for mock in descriptors().values())
