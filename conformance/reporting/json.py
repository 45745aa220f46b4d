"""results.json: the machine-readable record a CI gates on."""

from __future__ import annotations

import json as _json

from ..verdicts.results import RunResult


def render_json(run: RunResult) -> str:
    return _json.dumps(run.to_dict(), indent=2, ensure_ascii=False) + "\n"
