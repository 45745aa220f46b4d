"""The published interop matrix (docs/interop-matrix.md) says what the interop tests' snapshots say,
and every requirement of a protocol has a verdict for every implementation of it."""

from __future__ import annotations

import re

from tests.interop import matrix


def test_the_page_is_the_snapshots_rendered() -> None:
    assert matrix.PAGE.read_text(encoding="utf-8") == matrix.render(), (
        "docs/interop-matrix.md is out of date: python -m tests.interop.matrix"
    )


def test_every_requirement_has_a_verdict_for_every_implementation() -> None:
    assert "(not run)" not in matrix.render()


def test_each_server_document_judges_exactly_the_requirements_of_its_snapshot() -> None:
    """Each verdict is checked by hand in the server's interop document: a requirement the snapshot
    holds needs its row there, and a row for a requirement the suite no longer registers is stale."""
    row = re.compile(r"^\| ([A-Z]+-[A-Z]+-\d{3}) \|", re.MULTILINE)
    for server in matrix.SERVERS:
        rows = set(row.findall((matrix.PAGE.parent / server.document).read_text(encoding="utf-8")))
        held = set(matrix._snapshot(matrix._interop(server.module)))
        assert rows == held, (server.name, {"no row": sorted(held - rows), "no verdict": sorted(rows - held)})


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
