"""Agent Protocol's hostile faults (``mockserver/hostile.py``): a null step body that runs a step,
a lone surrogate that breaks every answer holding it, and their passing control; an upload's file
name or relative_path that is not UTF-8 (a lone surrogate as a lenient encoder writes it) kept, so
the upload and every answer holding it fail, or kept and answered as JSON escapes but unwritable in
its download's Content-Disposition, and the passing control that replaces it by U+FFFD."""

from __future__ import annotations

from ...faults import Fault, fault_maker
from ...hostile import Hostile, Surrogates
from ...hostile_faults import hostile_faults
from .faults import PROTOCOL

_fault = fault_maker(PROTOCOL)
UPLOAD = "uploadAgentTaskArtifacts"

NAMES: tuple[Fault, ...] = (
    _fault(
        "ap-file-name-surrogate-breaks-lists",
        ("AP-HOSTILE-001",),
        "an upload's file name or relative_path that is not UTF-8 is kept as lone surrogates; every answer "
        "holding it then fails to encode as UTF-8 (500): the upload's, the task's and its artifact list",
        operation=UPLOAD,
        touches=("getAgentTask", "listAgentTasks", "listAgentTaskArtifacts"),
        hostile=Hostile(surrogates=Surrogates.KEPT),
    ),
    _fault(
        "ap-file-name-not-utf8-kept",
        ("AP-HOSTILE-001",),
        "an upload's file name that is not UTF-8 is kept as lone surrogates and answered as JSON escapes; "
        "its download then answers 500 (its Content-Disposition cannot be written)",
        operation=UPLOAD,
        touches=("downloadAgentTaskArtifact",),
    ),
    _fault(
        "ap-file-name-not-utf8-replaced",
        (),
        "control: an upload's file name or relative_path that is not UTF-8 is decoded with U+FFFD in place "
        "of the bytes that are not, and the upload accepted, as a lenient decoder does",
        control=True,
        operation=UPLOAD,
        hostile=Hostile(surrogates=Surrogates.REPLACED),
    ),
)

FAULTS: tuple[Fault, ...] = NAMES + hostile_faults(
    fault_maker(PROTOCOL),
    "ap",
    null_body=(
        "step-null-body-runs",
        "executeAgentTaskStep",
        ("AP-ERR-004", "AP-SCHEMA-006"),
        "a step POST reads its body as `body or {}`: a null or [] body executes a step",
    ),
    surrogate=(
        "lone-surrogate-breaks-lists",
        "createAgentTask",
        ("AP-HOSTILE-001",),
        "a task's input keeps a lone surrogate (\\ud800) as sent; every answer holding it then fails to "
        "encode as UTF-8 (500): the create, the task and every task list that shows it",
        ("getAgentTask", "listAgentTasks"),
    ),
)
