"""The fault catalogue's mechanics: every named fault acts through exactly the means it declares."""

from __future__ import annotations

from dataclasses import fields

import pytest

from mockserver import FaultSet, catalogue, discover, resolve
from mockserver.descriptor import descriptors, mocked
from mockserver.wire import PLAIN


@pytest.mark.parametrize("protocol_id", mocked())
def test_every_fault_is_an_edit_a_switch_or_a_server_setting(protocol_id: str) -> None:
    mock = discover(protocol_id)
    faults = {f.name: f for f in mock.faults}
    switched = mock.switches.fault_names() if mock.switches is not None else {}
    assert set(switched.values()) <= set(faults), "a switch names no fault of the catalogue"
    idle = [
        name
        for name, f in faults.items()
        if name not in switched.values()
        and f.mutate is None
        and not f.skip_validation
        and not f.disables_auth
        and f.wire == PLAIN
        and f.hostile is None
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


def test_text_edits_are_what_the_edge_faults_say() -> None:
    """The edits the edge faults make of an echoed text, off by default (the mock stays faithful)."""
    from mockserver.faults import TEXT_COLUMN_BYTES, TextEdits

    text = '  cafe\u0301 \U0001f680\t"q" ' + "\u4e2d" * TEXT_COLUMN_BYTES
    assert TextEdits().apply(text) == text
    assert TextEdits(nfc=True).apply("cafe\u0301") == "caf\u00e9"
    assert TextEdits(trimmed=True).apply(" a\t") == "a"
    cut = TextEdits(column=True).apply(text)
    assert len(cut.encode()) <= TEXT_COLUMN_BYTES and text.startswith(cut)
    assert TextEdits(astral=True).apply("a\U0001f680b") == "a?b"
    assert TextEdits(controls=True).apply("a\tb\x07c\nd") == "abcd"
    assert TextEdits(json_escaped=True).apply('"\u00e9\n') == '\\"\\u00e9\\n'
    assert TextEdits(astral=True).apply_all({"\U0001f680": ["\U0001f680", 1]}) == {"?": ["?", 1]}


def test_each_wire_control_writes_one_choice_and_every_protocol_has_them() -> None:
    """The wire's controls (mockserver/wire.py): one choice each, off in normal runs, JSON and HTTP ones in
    every protocol's catalogue, the SSE ones where the streams are server-sent events."""
    found = catalogue()
    wired = {name: f for name, f in found.items() if f.wire != PLAIN}
    assert all(f.control and not f.breaks for f in wired.values())
    assert FaultSet().wire("agent-protocol") is PLAIN
    for name, fault in wired.items():
        assert resolve([name]).wire(fault.protocol) == fault.wire
        assert resolve([name]).wire("another-protocol") is PLAIN
    prefixes = {"agent-protocol": "ap", "neuro-san": "ns", "sgr-agent-core": "sgr", "synapse-agent": "syn"}
    for protocol, prefix in prefixes.items():
        assert f"{prefix}-wire-json-spaced" in wired and f"{prefix}-wire-chunked" in wired, protocol
    assert [n for n in wired if "-wire-sse-" in n] == [
        "sgr-wire-sse-crlf",
        "sgr-wire-sse-cr",
        "sgr-wire-sse-comments-id-retry",
        "sgr-wire-sse-idle-after-done",
    ]
