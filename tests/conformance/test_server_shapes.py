"""A server's shape never ends as a suite "error" (issue 34, class 3): faults of the catalogue
answer a read with a renamed field or a JSON type other than the document's; the requirement that
reads it fails, its finding filed under the answer that shows it, and no requirement ends as
"error" (which belongs to the suite's own bugs). The scenario phase runs whole (every check meets
the shape); the whole run is test_selfcheck's."""

from __future__ import annotations

from dataclasses import replace

import pytest

from conformance.engine.runner import run
from conformance.run.targets import embedded
from conformance.selfcheck.catalogue import fault_options
from conformance.verdicts.findings import operation_of
from conformance.verdicts.results import Status
from mockserver import catalogue
from specs.documents import load

FAULTS = catalogue()
SHAPES = {
    # fault -> the scenario requirement that reads the field
    "ap-pagination-total-renamed": "AP-PAGE-001",
    "ns-connectivity-as-object": "NS-CONN-001",
    "sgr-agents-task-renamed": "SGR-AGENT-001",  # a KeyError once ended it as "error"
    "syn-trace-time-renamed": "SYN-TRACE-002",
}


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_a_servers_shape_fails_its_reader_with_the_answer_as_evidence(name: str) -> None:
    fault = FAULTS[name]
    assert SHAPES[name] in fault.breaks
    spec = load(fault.protocol)
    with embedded().serve(fault.protocol, faults=(name,)) as server:
        options = fault_options(fault, server.url + spec.info.base_path, seed=0, timeout=8.0)
        result = run(replace(options, phases=("scenario",)))  # every scenario check meets the shape
    errors = {r.requirement.id: r.message for r in result.results if r.status is Status.ERROR}
    assert errors == {}
    (reader,) = [r for r in result.results if r.requirement.id == SHAPES[name]]
    assert reader.status is Status.FAILED, reader.message
    wanted = spec.operation(fault.operation).label
    for finding in reader.findings:
        deciding = finding.deciding
        assert deciding is not None and finding.operation == wanted, finding.message
        assert operation_of(spec, options.base_url, deciding.method, deciding.url) == wanted
        assert finding.to_dict()["curl"] == deciding.curl and deciding.status == 200
