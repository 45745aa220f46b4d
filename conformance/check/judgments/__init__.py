"""Judgments: one rule each, a pure function from what was observed (a request and its answer,
``Seen``) and what the run knew (``facts``: JSON values, the ids it made, the list's name) to the
problems the answer shows (empty: the rule holds). No I/O inside.

The drivers call the same judgment: a scenario check (``Context.judge``), the proxy's live-traffic
judge, and replay and the ``sh`` scripts (``agent-conformance judge``). A finding a judgment
decided names it (``Finding.judgment``, a stable name stored in results.json) with its facts, so a
replay judges today's answer again, whatever else moved in it (ids, times, items others added).
"""

from __future__ import annotations

from . import echoes as echoes
from . import errors as errors
from . import events as events
from . import lists as lists
from . import pages as pages
from .base import JUDGMENTS, Facts, Judgment, Seen, UnknownJudgment, judge, judgment, renamed

__all__ = [
    "JUDGMENTS",
    "Facts",
    "Judgment",
    "Seen",
    "UnknownJudgment",
    "echoes",
    "errors",
    "events",
    "judge",
    "judgment",
    "lists",
    "pages",
    "renamed",
]
