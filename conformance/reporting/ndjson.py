"""``--events FILE``: every run event as one JSON object per line, for dashboards and CI.

Each line names its event (``"event": "requirement_finished"``) and when it was written; the
shape of every line is ``conformance/events.schema.json``. Lines are flushed as they are written,
so a reader can follow the file while the run works.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

from ..check.shown import lone_escaped
from ..run.events import (
    CaseFinished,
    Event,
    Fatal,
    PhaseFinished,
    PhaseStarted,
    RequirementFinished,
    RequirementStarted,
    RunFinished,
    RunStarted,
    StageStarted,
)

SCHEMA_PATH = Path(__file__).resolve().parent.parent / "events.schema.json"


_LINE_BREAKS = str.maketrans({"\x85": "\\u0085", "\u2028": "\\u2028", "\u2029": "\\u2029"})
"""Characters JSON leaves raw in a string but many line readers (Python's ``str.splitlines``, some
editors, JavaScript before ES2019) take for line ends: escaped, so an event stays on its line
whatever text the target put in a message."""


def one_line(encoded: str) -> str:
    return encoded.translate(_LINE_BREAKS)


def event_name(event: Event) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", type(event).__name__).lower()


def to_dict(event: Event) -> dict[str, Any]:
    body: dict[str, Any]
    if isinstance(event, RunStarted):
        body = {
            "protocol": event.protocol,
            "target": event.target,
            "seed": event.seed,
            "level": event.level,
            "requirements": list(event.requirements),
        }
    elif isinstance(event, PhaseStarted):
        body = {"phase": event.phase, "requirements": list(event.requirements)}
    elif isinstance(event, StageStarted):
        body = {"phase": event.phase, "stage": event.stage}
    elif isinstance(event, RequirementStarted):
        r = event.requirement
        body = {"id": r.id, "level": r.level.value, "phase": r.phase, "index": event.index, "total": event.total}
    elif isinstance(event, CaseFinished):
        body = {
            "stage": event.stage,
            "operation": event.operation,
            "outcome": event.outcome,
            "checked": list(event.checked),
            "failed": list(event.failed),
        }
    elif isinstance(event, RequirementFinished):
        body = {"index": event.index, "total": event.total, "result": event.result.to_dict()}
    elif isinstance(event, Fatal):
        body = {"reason": event.reason}
    elif isinstance(event, PhaseFinished):
        body = {"phase": event.phase, "duration_s": round(event.duration_s, 3)}
    else:
        assert isinstance(event, RunFinished)
        run = event.result
        # the requirements themselves went out one by one; the end says how the run came out
        body = {
            "protocol": run.protocol,
            "exit_code": run.exit_code,
            "fatal": run.fatal,
            "duration_s": round(run.duration_s, 3),
            "summary": run.tally(),
            "advice": run.advice_tally(),
            "stats": run.stats,
        }
    return {"event": event_name(event), "time": datetime.now(UTC).isoformat(timespec="milliseconds"), **body}


class EventStream:
    """An event handler writing JSON lines to an open text file."""

    def __init__(self, out: IO[str]) -> None:
        self.out = out

    def handle(self, event: Event) -> None:
        self.out.write(one_line(lone_escaped(json.dumps(to_dict(event), ensure_ascii=False, default=str))) + "\n")
        self.out.flush()


def schema() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    return loaded
