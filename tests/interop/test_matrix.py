"""The published interop matrix (docs/interop-matrix.md) says what the interop tests' snapshots say,
and every requirement of a protocol has a verdict for every implementation of it."""

from __future__ import annotations

from tests.interop import matrix


def test_the_page_is_the_snapshots_rendered() -> None:
    assert matrix.PAGE.read_text(encoding="utf-8") == matrix.render(), (
        "docs/interop-matrix.md is out of date: python -m tests.interop.matrix"
    )


def test_every_requirement_has_a_verdict_for_every_implementation() -> None:
    assert "(not run)" not in matrix.render()


def test_a_changed_snapshot_changes_the_page() -> None:
    """The page is read from the snapshot, not written once: a verdict moved there moves here."""
    import pytest

    sdk = matrix._interop("test_agent_protocol_sdk")
    before = matrix.render()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(sdk, "PASSED", sdk.PASSED - {"AP-ERR-001"})
        patch.setattr(sdk, "FAILED", sdk.FAILED | {"AP-ERR-001"})
        after = matrix.render()
    assert "| AP-ERR-001 | must | pass |" in before and "| AP-ERR-001 | must | **FAIL** |" in after


def test_every_client_has_every_scenario_of_its_protocol_judged_or_named_not_run() -> None:
    from conformance.client.scenarios import scenarios

    module = matrix._interop("test_client_mode")
    for client in matrix.CLIENTS:
        covered = set(getattr(module, client.snapshot)) | set(getattr(module, f"{client.snapshot}_NOT_RUN", {}))
        assert covered == {s.name for s in scenarios(client.protocol)}, client.name
