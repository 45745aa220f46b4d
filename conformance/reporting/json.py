"""results.json: the machine-readable record a CI gates on, with its certificate (``certificate.py``)."""

from __future__ import annotations

import json as _json
from collections.abc import Mapping

from ..check.shown import lone_escaped
from ..verdicts.results import RunResult
from .certificate import certificate, seal


def render_json(run: RunResult, files: Mapping[str, str] | None = None) -> str:
    """results.json sealed: ``files`` are the digests of the report's other files, when written."""
    data = run.to_dict()
    data["certificate"] = certificate(run, files)
    return seal(lone_escaped(_json.dumps(data, indent=2, ensure_ascii=False)) + "\n")
