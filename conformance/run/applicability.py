"""Which generic schema requirements a document lets the property-based phase decide.

A requirement that no server could fail against a document would be reported passed while
testing nothing; those are not registered for that document. Each predicate answers "could a
server fail this check here?" from the document (and, for the stateful check, from how
schemathesis walks it).
"""

from __future__ import annotations

from specs.documents import Spec

from ..check import internals


def some_status_can_be_undocumented(spec: Spec) -> bool:
    """status_code_conformance accepts any status of an operation that documents ``default``."""
    return any("default" not in op.definition.get("responses", {}) for op in spec.operations())


def some_header_can_fail(spec: Spec) -> bool:
    """response_headers_conformance fails only on a missing required header or a value its schema
    refuses: some declared header must be required or constrained beyond any string."""
    for op in spec.operations():
        for response in op.definition.get("responses", {}).values():
            for header in (spec.resolve(response).get("headers") or {}).values():
                header = spec.resolve(header)
                if header.get("required") or spec.resolve(header.get("schema")) != {"type": "string"}:
                    return True
    return False


def _under(parent: str, child: str) -> bool:
    """schemathesis's prefix rule on path templates: parameters match parameters, literals match
    themselves in singular or plural."""
    left, right = parent.rstrip("/").split("/"), child.rstrip("/").split("/")
    return len(left) <= len(right) and all(
        ("{" in a and "{" in b) or a.rstrip("s") == b.rstrip("s") for a, b in zip(left, right, strict=False)
    )


def something_created_is_read_back(spec: Spec) -> bool:
    """ensure_resource_availability judges only a 404 answered to a stateful step whose parent is a
    POST on a prefix of the step's path. With schemathesis's own link inference and choice of root
    operations, is there such a parent and step? This leans on schemathesis internals on purpose;
    if they move, the requirement stays registered (the safe side) and a test notices."""
    try:
        Ok = internals.get("schemathesis.result_ok")
        collect_transitions = internals.get("schemathesis.collect_transitions")
        classify_root_transitions = internals.get("schemathesis.classify_root_transitions")

        schema = spec.schemathesis_schema()
        if schema.analysis.should_inject_links():
            schema.analysis.inject_links()
        operations = [result.ok() for result in schema.get_all_operations() if isinstance(result, Ok)]
        transitions = collect_transitions(operations)
        roots = classify_root_transitions(operations, transitions, schema.analysis.dependency_graph)
        links = [link for entry in transitions.operations.values() for link in entry.outgoing]
    except (internals.InternalMoved, AttributeError, TypeError):
        return True
    reached = set(roots.reliable or roots.fallback) | {link.target.label for link in links}
    return any(
        link.source.label in reached and link.source.method == "post" and _under(link.source.path, link.target.path)
        for link in links
    )
