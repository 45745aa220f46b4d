"""The HAR 1.2 validator the tests hold every archive to: the JSON Schema of npm's ``har-schema``
(the one ``har-validator`` uses), vendored in ``tests/fixtures/har_schema/``."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from jsonschema import Draft6Validator, FormatChecker
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT6

SCHEMAS = Path(__file__).resolve().parent / "fixtures" / "har_schema"


@cache
def _validator() -> Draft6Validator:
    resources = []
    for file in SCHEMAS.glob("*.json"):
        schema = json.loads(file.read_text(encoding="utf-8"))
        resources.append((schema["$id"], Resource.from_contents(schema, default_specification=DRAFT6)))
    registry: Registry[Any] = Registry().with_resources(resources)
    return Draft6Validator({"$ref": "har.json#"}, registry=registry, format_checker=FormatChecker())


def har_problems(document: Any) -> list[str]:
    """Every way ``document`` departs from HAR 1.2 (empty: it is a valid archive)."""
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in _validator().iter_errors(document)]
