"""docs/traceability/: each normative statement of a document traced to the requirement that judges
it, generated from the documents and the registry. The pages on disk are what the generator makes
now, so a requirement added, removed or re-referenced without regenerating them fails here."""

from __future__ import annotations

from conformance.reporting import traceability
from conformance.reporting.traceability import DOCS, Tracer, built_in, pages
from conformance.run.suites import suite


def test_the_pages_are_in_step_with_the_documents_and_the_registry() -> None:
    made = pages()
    assert set(made) == {"README.md", *(f"{pid}.md" for pid in built_in())}
    stale = [name for name, text in made.items() if (DOCS / name).read_text(encoding="utf-8") != text]
    assert not stale, f"out of step: {stale}; regenerate with: python -m conformance.reporting.traceability"
    assert traceability.main(["--check"]) == 0


def test_every_requirement_of_the_registry_has_its_row() -> None:
    for pid in built_in():
        page = (DOCS / f"{pid}.md").read_text(encoding="utf-8")
        for check in suite(pid).registry:
            assert f"\n| {check.requirement.id} | " in page, f"{pid}: {check.requirement.id} has no row"


def test_a_requirement_gone_from_the_registry_puts_the_table_out_of_step() -> None:
    tracer = Tracer("agent-protocol")
    before = tracer.render()
    tracer.requirements = [r for r in tracer.requirements if r.id != "AP-ERR-003"]
    after = tracer.render()
    assert after != before and "AP-ERR-003" not in after


def _statement(pid: str, kind: str, where: str, text: str) -> traceability.Statement:
    found = [s for s in Tracer(pid).statements() if s.kind == kind and s.pointer == where and text in s.text]
    assert len(found) == 1, (where, text, found)
    return found[0]


def test_a_status_is_judged_by_the_check_that_names_it_and_by_the_generic_body_check() -> None:
    gone = _statement("agent-protocol", "status", "GET /ap/v1/agent/tasks/{task_id}/artifacts/{artifact_id}", "404")
    assert gone.judged_by == ("AP-ERR-003", "AP-SCHEMA-005")


def test_prose_is_judged_by_the_requirement_that_cites_it_or_says_why_not() -> None:
    cited = _statement(
        "neuro-san", "prose", "/components/schemas/Status/properties/message/description", "developer-facing"
    )
    assert cited.judged_by == ("NS-ERR-002",)
    advice = _statement("sgr-agent-core", "prose", "/info/description", "reverse proxy")
    assert advice.judged_by == () and advice.why_not.startswith("no requirement")
