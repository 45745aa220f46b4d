"""Agent Protocol's named faults: each breaks the named AP-* requirements in one realistic way."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ...faults import TEXT_COLUMN_BYTES, Fault, fault_maker, wire_controls
from ...faults import Switches as _Switches
from ...reply import Reply
from .faults_across import ACROSS

PROTOCOL = "agent-protocol"
RECENT_INDEX = 16
"""Tasks in the listing index of ap-task-list-recent-16."""
SUMMARY_CHARS = 40
"""Characters of input kept in the list rows of ap-task-list-input-truncated."""
NEWEST_ARTIFACTS = 8
"""Artifacts a task's list shows under ap-artifacts-list-newest-8."""
CHUNK_BYTES = 64 * 1024
"""Bytes of an upload kept under ap-upload-reads-one-chunk."""
LISTED_PAGES = 3
"""Pages a list serves under ap-page-empty-past-3 (an OFFSET cap)."""
NAME_LIMIT = 200
"""Bytes of a file name the control ap-upload-long-name-refused accepts."""


@dataclass(frozen=True, slots=True)
class Switches(_Switches):
    """The behaviour faults the handlers switch on (the rest edit answers: ``mutate``)."""

    prefix: ClassVar[str] = "ap"
    artifact_unknown_200: bool = False
    artifacts_keyed_by_file_name: bool = False
    artifacts_list_agent_only: bool = False
    artifacts_total_uploads_only: bool = False
    create_requires_input: bool = False
    create_race: bool = False
    download_json_content_type: bool = False
    download_no_disposition: bool = False
    download_stalls: bool = False
    download_text_mode: bool = False
    page_beyond_end_404: bool = False
    page_default_size_20: bool = False
    page_floor_total_pages: bool = False
    page_huge_size_crashes: bool = False
    page_ignores_current_page: bool = False
    page_params_ignored: bool = False
    reads_lag_one_write: bool = False
    step_drops_additional_input: bool = False
    step_get_returns_latest: bool = False
    step_list_latest_running: bool = False
    step_list_omits_latest: bool = False
    step_artifact_path_empty: bool = False
    step_list_summary: bool = False
    step_never_last: bool = False
    task_artifacts_stale: bool = False
    task_flattens_additional_input: bool = False
    task_list_cached_at_create: bool = False
    task_list_input_truncated: bool = False
    task_list_recent_16: bool = False
    upload_bodiless_415: bool = False
    upload_path_traversal: bool = False
    upload_traversal_absolute: bool = False
    upload_traversal_backslashed: bool = False
    upload_traversal_by_name: bool = False
    upload_traversal_percent_decoded: bool = False
    upload_traversal_unreadable: bool = False
    artifacts_by_file_name_traversal: bool = False
    upload_undeclared_part_400: bool = False
    upload_relative_path_dropped: bool = False
    download_non_latin1_500: bool = False
    file_name_not_utf8_kept: bool = False
    # the edge corpus (conformance/edges.py): names, encodings, sizes, collisions
    upload_name_nfc: bool = False
    upload_dotfiles_unservable: bool = False
    upload_same_name_replaces: bool = False
    upload_folder_collision_500: bool = False
    upload_empty_refused: bool = False
    upload_reads_one_chunk: bool = False
    download_disposition_ascii: bool = False
    task_input_nfc: bool = False
    task_input_trimmed: bool = False
    task_input_text_column: bool = False
    task_astral_replaced: bool = False
    step_input_controls_stripped: bool = False
    numbers_as_float32: bool = False
    artifacts_list_newest_8: bool = False
    page_empty_past_3: bool = False
    # passing controls: what the document lets a server do with those edges
    upload_folder_collision_409: bool = False
    upload_long_name_refused: bool = False
    upload_same_name_conflict: bool = False
    long_input_refused: bool = False
    big_integers_as_floats: bool = False
    # facts across calls (faults_across.py)
    task_list_newest_first: bool = False
    artifacts_list_newest_first: bool = False
    step_list_newest_first: bool = False

    @property
    def names_are_paths(self) -> bool:
        """Some traversal fault maps an upload's names to a path in one shared folder."""
        return (
            self.upload_path_traversal
            or self.upload_traversal_absolute
            or self.upload_traversal_backslashed
            or self.upload_traversal_by_name
            or self.upload_traversal_percent_decoded
            or self.upload_traversal_unreadable
            or self.artifacts_by_file_name_traversal
        )


def _drop_task_id(reply: Reply) -> None:
    if reply.status == 200:
        reply.body.pop("task_id", None)


def _created_201(reply: Reply) -> None:
    if reply.status == 200:
        reply.status = 201


def _detail_404(reply: Reply) -> None:
    if reply.status == 404:
        reply.body = {"detail": reply.body.get("message")}


def _list_422(reply: Reply) -> None:
    if reply.status == 422:
        reply.body = reply.body.get("errors") or [reply.body.get("message")]


def _text_plain(reply: Reply) -> None:
    reply.content_type = "text/plain"


def _unlabelled(reply: Reply) -> None:
    reply.content_type = ""


def _status_done(reply: Reply) -> None:
    if reply.status == 200:
        reply.body["status"] = "done"


def _agent_created(reply: Reply) -> None:
    if reply.status == 200:
        reply.body["agent_created"] = True


def _total_renamed(reply: Reply) -> None:
    if reply.status == 200 and isinstance(reply.body, dict) and isinstance(reply.body.get("pagination"), dict):
        pagination = reply.body["pagination"]
        pagination["total"] = pagination.pop("total_items", None)  # another paging library's name


_fault = fault_maker(PROTOCOL)


FAULTS: tuple[Fault, ...] = (
    # missing required field, wrong enum value, wrong status, wrong content type, error body shape
    # Not AP-MODEL-003: the list does show each task created; the model, which cannot name them,
    # takes them for another writer's (they read by id), as it must on a shared server.
    _fault(
        "ap-task-missing-id",
        ("AP-TASK-001", "AP-SCHEMA-005"),
        "createAgentTask answers without the required task_id",
        operation="createAgentTask",
        mutate=_drop_task_id,
    ),
    # No AP-SCHEMA-002: every operation documents `default`, which admits any status (not registered).
    _fault(
        "ap-task-created-201",
        ("AP-TASK-001",),
        "createAgentTask answers 201, a status the document does not list",
        operation="createAgentTask",
        mutate=_created_201,
    ),
    # A list's content type is its form, not its paging: AP-PAGE-001 reads it as JSON regardless.
    _fault(
        "ap-list-text-plain",
        ("AP-SCHEMA-003",),
        "listAgentTasks labels its JSON text/plain",
        operation="listAgentTasks",
        mutate=_text_plain,
    ),
    _fault(
        "ap-step-status-done",
        ("AP-STEP-001", "AP-SCHEMA-005"),
        'an executed step\'s status is "done", not one of created/running/completed',
        operation="executeAgentTaskStep",
        mutate=_status_done,
    ),
    _fault(
        "ap-404-wrong-shape",
        ("AP-ERR-001", "AP-SCHEMA-005"),
        'getAgentTask\'s 404 body is {"detail"} instead of {"message"}',
        operation="getAgentTask",
        mutate=_detail_404,
    ),
    _fault(
        "ap-422-wrong-shape",
        ("AP-ERR-004", "AP-SCHEMA-005"),
        "createAgentTask's 422 body is a JSON array, not an object",
        operation="createAgentTask",
        mutate=_list_422,
    ),
    _fault(
        "ap-artifact-unknown-200",
        ("AP-ERR-003",),
        "downloading an unknown artifact answers 200 with no bytes instead of 404",
        operation="downloadAgentTaskArtifact",
    ),
    _fault(
        "ap-step-get-returns-latest",
        ("AP-STEP-004", "AP-STEP-002", "AP-ERR-002"),
        "GET .../steps/{step_id} answers the task's latest step whatever the id",
        operation="getAgentTaskStep",
    ),
    # accepting invalid input, a crash
    # what it accepted it echoes back: answers off the Task schema (AP-SCHEMA-005's subject too)
    _fault(
        "ap-create-accepts-invalid",
        ("AP-ERR-004", "AP-SCHEMA-006", "AP-SCHEMA-005"),
        "createAgentTask does not validate its body: wrong types and non-objects get 200",
        operation="createAgentTask",
        skip_validation=True,
    ),
    _fault(
        "ap-page-huge-size-crashes",
        ("AP-SCHEMA-001",),
        "a page_size above 1000 crashes the list operations (500)",
        operation="listAgentTasks",
    ),
    # rejecting valid input, a created task that cannot be read back
    _fault(
        "ap-create-requires-input",
        ("AP-SCHEMA-007",),
        "createAgentTask answers 422 when input is missing or null, which the document allows",
        operation="createAgentTask",
    ),
    # every requirement that reads back what it just wrote
    _fault(
        "ap-reads-lag-one-write",
        ("AP-SCHEMA-008", "AP-TASK-002", "AP-TASK-003", "AP-STEP-002", "AP-STEP-004", "AP-ARTIFACT-002"),
        "reads see each task as it was before its latest write (an off-by-one projection): a task just "
        "created, its newest step and its newest artifact answer 404 until the task is written again",
    ),
    # losing data
    _fault(
        "ap-task-flattens-additional-input",
        ("AP-TASK-002",),
        "createAgentTask keeps only the scalar values of additional_input (nested ones are lost)",
        operation="createAgentTask",
    ),
    _fault(
        "ap-step-drops-additional-input",
        ("AP-STEP-002", "AP-STEP-003", "AP-STEP-004", "AP-MODEL-002"),
        "a step's answer echoes additional_input but the stored step has {}",
        operation="executeAgentTaskStep",
    ),
    _fault(
        "ap-step-list-omits-latest",
        ("AP-STEP-003", "AP-PAGE-002", "AP-MODEL-003"),
        "listing a task's steps leaves out the latest executed step",
        operation="listAgentTaskSteps",
    ),
    _fault(
        "ap-upload-marks-agent-created",
        ("AP-ARTIFACT-001", "AP-ARTIFACT-004", "AP-MODEL-004"),
        "an uploaded artifact is reported agent_created: true",
        advises=("AP-ARTIFACT-005",),
        operation="uploadAgentTaskArtifacts",
        mutate=_agent_created,
    ),
    _fault(
        "ap-download-text-mode",
        ("AP-ARTIFACT-002", "AP-MODEL-004"),
        "downloads pass the bytes through a UTF-8 text round trip (invalid bytes become U+FFFD)",
        operation="downloadAgentTaskArtifact",
    ),
    # the label is AP-SCHEMA-003's fact alone: the bytes downloaded are still read, and hold
    _fault(
        "ap-download-json-content-type",
        ("AP-SCHEMA-003",),
        "downloads are labelled application/json instead of application/octet-stream",
        operation="downloadAgentTaskArtifact",
    ),
    _fault(
        "ap-download-no-disposition",
        (),
        "downloads carry no Content-Disposition header, which the document does not name (a control: no "
        "document requirement fails; advice only)",
        control=True,
        advises=("AP-ARTIFACT-003",),
        operation="downloadAgentTaskArtifact",
    ),
    _fault(
        "ap-artifacts-list-agent-only",
        ("AP-ARTIFACT-004", "AP-PAGE-003", "AP-MODEL-003"),
        "the artifact list shows only agent-created artifacts, not uploads",
        operation="listAgentTaskArtifacts",
    ),
    _fault(
        "ap-task-artifacts-stale",
        ("AP-MODEL-001",),
        "a task's artifacts list only agent-created artifacts, not uploads",
        advises=("AP-ARTIFACT-005",),
        operation="getAgentTask",
    ),
    _fault(
        "ap-upload-path-traversal",
        ("AP-ARTIFACT-002", "AP-ARTIFACT-006", "AP-MODEL-004"),
        "uploads write task/relative_path/file_name to one shared store without checking for '..', "
        "so a crafted path overwrites another task's artifact (and a second upload of a name its first)",
        operation="uploadAgentTaskArtifacts",
    ),
    # the same hole where the suite did not aim: relative_path checked, then ignored
    _fault(
        "ap-artifacts-by-file-name-traversal",
        ("AP-ARTIFACT-002", "AP-ARTIFACT-006", "AP-MODEL-004"),
        "uploads refuse '..' in relative_path, then ignore it and keep the file at task/file_name in one shared "
        "store (a leading '/' stripped, '..' followed): a crafted file name overwrites another task's artifact, "
        "and uploads of one name in two folders are one file",
        operation="uploadAgentTaskArtifacts",
    ),
    # the same hole behind a check that looks only for one spelling of it
    _fault(
        "ap-upload-traversal-unreadable",
        ("AP-ARTIFACT-002", "AP-ARTIFACT-006", "AP-MODEL-004"),
        "uploads follow '..' in their names into a shared folder, but a download refuses (500) a path that left "
        "its task's folder: the other task's artifact is overwritten, the crafted one cannot be read back",
        operation="uploadAgentTaskArtifacts",
    ),
    _fault(
        "ap-upload-traversal-percent-decoded",
        ("AP-ARTIFACT-002", "AP-ARTIFACT-006", "AP-MODEL-004"),
        "uploads refuse names holding '..' and then percent-decode them, so %2E%2E%2F climbs into another "
        "task's folder",
        operation="uploadAgentTaskArtifacts",
    ),
    _fault(
        "ap-upload-traversal-backslashed",
        ("AP-ARTIFACT-002", "AP-ARTIFACT-006", "AP-MODEL-004"),
        "uploads refuse names holding '../' and then read backslashes as separators, so '..\\' climbs into "
        "another task's folder",
        operation="uploadAgentTaskArtifacts",
    ),
    # seen on AutoGPT Forge (docs/interop-autogpt-forge.md): the victim is not where the suite put it
    _fault(
        "ap-upload-traversal-by-name",
        ("AP-ARTIFACT-001", "AP-ARTIFACT-002", "AP-ARTIFACT-006", "AP-MODEL-004"),
        'uploads ignore relative_path (answered as "") and keep files by their names in one shared folder, '
        "following '..': a file name climbing into another task's folder overwrites that task's artifact",
        operation="uploadAgentTaskArtifacts",
    ),
    _fault(
        "ap-upload-traversal-absolute",
        ("AP-ARTIFACT-002", "AP-ARTIFACT-006", "AP-MODEL-004"),
        "uploads strip '../' from their names but keep a leading '/', so an absolute name replaces the task's "
        "folder (a name /dev/null stores nothing)",
        operation="uploadAgentTaskArtifacts",
    ),
    # fair refusals the document allows (passing controls): no status is named for a refused upload
    _fault(
        "ap-upload-bodiless-415",
        (),
        "an upload with no body is refused 415: its schema requires the file part, so any 4xx refuses it fairly",
        operation="uploadAgentTaskArtifacts",
        control=True,
    ),
    _fault(
        "ap-upload-undeclared-part-400",
        (),
        "an upload carrying multipart parts the document does not declare (an empty name included) is refused "
        "400: the document names no status for it, so any 4xx refuses it fairly",
        operation="uploadAgentTaskArtifacts",
        control=True,
    ),
    # broken pagination
    _fault(
        "ap-page-floor-total-pages",
        ("AP-PAGE-001", "AP-PAGE-002", "AP-PAGE-003"),
        "total_pages is total_items // page_size (rounded down)",
        operation="listAgentTasks",
    ),
    _fault(
        "ap-page-ignores-current-page",
        ("AP-PAGE-001", "AP-PAGE-002", "AP-PAGE-003", "AP-PAGE-004", "AP-MODEL-003"),
        "every list answers its first page whatever current_page asks",
        operation="listAgentTasks",
    ),
    # seen on AutoGPT Forge (docs/interop-autogpt-forge.md), which reads `page` and `pageSize`: a list
    # longer than one page is read only as far as its first page; what lies beyond is not listed
    # wrongly but not observed (the round-trip requirements are blocked there, not failed)
    _fault(
        "ap-page-params-ignored",
        ("AP-PAGE-001", "AP-PAGE-002", "AP-PAGE-003", "AP-PAGE-004"),
        "every list ignores current_page and page_size: it answers its first 10 items, and says so",
        operation="listAgentTasks",
    ),
    _fault(
        "ap-page-default-size-20",
        ("AP-PAGE-001",),
        "without page_size the lists use 20 items per page instead of the documented 10",
        operation="listAgentTasks",
    ),
    _fault(
        "ap-page-beyond-end-404",
        ("AP-PAGE-004",),
        "a current_page beyond the last page answers 404 instead of an empty page",
        operation="listAgentTasks",
    ),
    # a job that never finishes, a stall
    _fault(
        "ap-step-never-last",
        ("AP-STEP-001",),
        "steps never report is_last: the task never finishes",
        operation="executeAgentTaskStep",
    ),
    # wrong facts behind the right shapes (the model-based phase, conformance/protocols/agent_protocol/model.py)
    _fault(
        "ap-task-list-cached-at-create",
        ("AP-MODEL-001",),
        "the task list serves each task as it was created: the artifacts its steps produced never show there",
        operation="listAgentTasks",
    ),
    _fault(
        "ap-task-list-input-truncated",
        ("AP-MODEL-001",),
        f"the task list's items carry input cut to {SUMMARY_CHARS} characters (a summary column)",
        operation="listAgentTasks",
    ),
    _fault(
        "ap-step-list-summary",
        ("AP-MODEL-002",),
        "the step list's items have output and additional_output null (a summary projection)",
        operation="listAgentTaskSteps",
    ),
    _fault(
        "ap-step-list-latest-running",
        ("AP-MODEL-005",),
        "the step list shows a task's latest step as running after its POST answered completed",
        operation="listAgentTaskSteps",
    ),
    _fault(
        "ap-task-list-recent-16",
        ("AP-MODEL-003",),
        f"the task list comes from an index of the {RECENT_INDEX} newest tasks: older ones drop off it, and "
        "total_items counts the index",
        operation="listAgentTasks",
    ),
    _fault(
        "ap-artifacts-total-uploads-only",
        ("AP-MODEL-003",),
        "the artifact list's total_items counts only uploads, not the artifacts steps produced",
        operation="listAgentTaskArtifacts",
    ),
    _fault(
        "ap-step-artifact-path-empty",
        ("AP-MODEL-004",),
        'a step shows the artifacts it produced with relative_path "" where the task and its list say null',
        operation="executeAgentTaskStep",
    ),
    _fault(
        "ap-artifacts-keyed-by-file-name",
        ("AP-ARTIFACT-002", "AP-MODEL-004"),
        "artifact bytes are stored by task, relative_path and file name: downloading an upload gives the bytes "
        "of the latest upload of the same name",
        operation="downloadAgentTaskArtifact",
    ),
    # the edge corpus (conformance/edges.py), fed to every round trip each run
    _fault(
        "ap-upload-name-nfc",
        ("AP-ARTIFACT-001",),
        "file names are stored normalised to NFC: a decomposed (NFD) name comes back composed",
        operation="uploadAgentTaskArtifacts",
    ),
    _fault(
        "ap-upload-dotfiles-unservable",
        ("AP-ARTIFACT-002",),
        "a dot-leading file name (.env) is stored and listed, but its download answers 404 (a static "
        "file server that hides dotfiles)",
        operation="downloadAgentTaskArtifact",
    ),
    _fault(
        "ap-upload-same-name-replaces",
        ("AP-ARTIFACT-001", "AP-ARTIFACT-002", "AP-MODEL-003", "AP-MODEL-004"),
        "a second upload of a name to the same folder of a task replaces the first: same artifact_id, the new bytes",
        operation="uploadAgentTaskArtifacts",
    ),
    _fault(
        "ap-upload-folder-collision-500",
        ("AP-ARTIFACT-001",),
        "an upload whose path collides with a folder (a file named like a folder, or a relative_path through "
        "a file) crashes with 500, as a server writing files to disk does",
        operation="uploadAgentTaskArtifacts",
    ),
    _fault(
        "ap-upload-empty-refused",
        ("AP-ARTIFACT-001",),
        "an empty file is refused with 422 (a validator that wants at least one byte)",
        operation="uploadAgentTaskArtifacts",
    ),
    _fault(
        "ap-upload-reads-one-chunk",
        ("AP-ARTIFACT-002",),
        f"an upload keeps only its first {CHUNK_BYTES // 1024} KiB (one read of the part)",
        operation="uploadAgentTaskArtifacts",
    ),
    _fault(
        "ap-download-disposition-ascii",
        (),
        "Content-Disposition carries only an ASCII filename (non-ASCII characters replaced), no filename*; the "
        "header is practice, not the document (a control; advice only)",
        operation="downloadAgentTaskArtifact",
        control=True,
        advises=("AP-ARTIFACT-003",),
    ),
    _fault(
        "ap-task-input-nfc",
        ("AP-TASK-002",),
        "a task's input is stored normalised to NFC: combining marks are composed",
        operation="createAgentTask",
    ),
    _fault(
        "ap-task-input-trimmed",
        ("AP-TASK-002",),
        "a task's input is stored with the whitespace at its ends trimmed",
        operation="createAgentTask",
    ),
    _fault(
        "ap-task-input-text-column",
        ("AP-TASK-002",),
        f"a task's input is cut to {TEXT_COLUMN_BYTES} bytes of UTF-8 (a TEXT column), silently",
        operation="createAgentTask",
    ),
    _fault(
        "ap-task-astral-replaced",
        ("AP-TASK-002",),
        "characters beyond U+FFFF (emoji) in a task's input and additional_input become '?' (a 3-byte utf8 store)",
        operation="createAgentTask",
    ),
    _fault(
        "ap-step-input-controls-stripped",
        ("AP-STEP-002",),
        "a step's input is stored with its control characters (tab, newline, ...) removed",
        operation="executeAgentTaskStep",
    ),
    # RFC 8259 section 6 lets a server keep numbers as IEEE 754 doubles (I-JSON's range, RFC 7493)
    _fault(
        "ap-big-integers-as-floats",
        (),
        "control: additional_input numbers are stored as doubles, integers beyond 2^53 losing their last digits "
        "(RFC 8259 section 6 allows it; I-JSON's interoperable range is binary64)",
        operation="createAgentTask",
        control=True,
    ),
    _fault(
        "ap-numbers-as-float32",
        ("AP-TASK-002", "AP-STEP-002"),
        "additional_input numbers are stored as 32-bit floats (a REAL column): 0.1 + 0.2 comes back "
        "0.30000001192092896, precision lost within the binary64 range every JSON peer can expect",
        operation="createAgentTask",
    ),
    _fault(
        "ap-artifacts-list-newest-8",
        ("AP-ARTIFACT-004", "AP-MODEL-003"),
        f"a task's artifact list shows only its {NEWEST_ARTIFACTS} newest artifacts, total_items counting them",
        operation="listAgentTaskArtifacts",
    ),
    _fault(
        "ap-page-empty-past-3",
        ("AP-PAGE-001", "AP-MODEL-003"),
        f"every list answers pages past the {LISTED_PAGES}rd with no items (an OFFSET cap), the totals unchanged",
        operation="listAgentTasks",
    ),
    _fault(
        "ap-upload-folder-collision-409",
        (),
        "control: an upload whose path collides with a folder is refused with 409 and a message",
        operation="uploadAgentTaskArtifacts",
        control=True,
    ),
    _fault(
        "ap-upload-long-name-refused",
        (),
        f"control: a file name over {NAME_LIMIT} bytes is refused with 422 and a message",
        operation="uploadAgentTaskArtifacts",
        control=True,
    ),
    _fault(
        "ap-upload-same-name-conflict",
        (),
        "control: a second upload of a name to the same folder of a task is refused with 409 (the first is kept)",
        operation="uploadAgentTaskArtifacts",
        control=True,
    ),
    _fault(
        "ap-long-input-refused",
        (),
        "control: a task or step input over 60000 characters is refused with 422",
        operation="createAgentTask",
        control=True,
    ),
    _fault(
        "ap-download-stalls",
        ("AP-ARTIFACT-002",),
        "a download sends its headers and half its bytes, then stalls",
        operation="downloadAgentTaskArtifact",
        hangs=True,
    ),
    _fault(
        "ap-pagination-total-renamed",
        # a server's shape: the paging checks fail on it with the page as evidence, never as a
        # suite error (a KeyError once ended them as "error"); without the count no page is known
        # to lie past the last, so AP-PAGE-004 is blocked by AP-PAGE-001 (the run and the proxy alike)
        ("AP-PAGE-001", "AP-MODEL-003", "AP-SCHEMA-005"),
        "listAgentTasks' pagination names its count `total`, not the document's `total_items`",
        operation="listAgentTasks",
        mutate=_total_renamed,
    ),
    # requests at the same moment (conformance/check/concurrent.py)
    _fault(
        "ap-create-race",
        ("AP-TASK-003",),
        "task ids come from a counter read before the store's write and advanced after it: tasks created at the "
        "same moment get one task_id, and the last one created replaces the others",
        operation="createAgentTask",
    ),
    # verdicts per observation: what exists is judged whatever the upload answered, and a fact is
    # failed by its one owner (the controls of both: ap-upload-long-name-refused, the wire's)
    _fault(
        "ap-upload-relative-path-dropped",
        ("AP-ARTIFACT-001",),
        'uploads keep files by name alone: relative_path is stored and answered as "" (every artifact exists, '
        "lists and downloads as its upload answered)",
        operation="uploadAgentTaskArtifacts",
    ),
    _fault(
        "ap-download-non-latin1-500",
        ("AP-ARTIFACT-002",),
        "the download of an artifact whose file name is not Latin-1 answers 500 (a server that writes the name "
        "raw into its Content-Disposition header)",
        operation="downloadAgentTaskArtifact",
    ),
    _fault(
        "ap-step-read-text-plain",
        ("AP-SCHEMA-003",),
        "getAgentTaskStep labels its JSON text/plain: the step read back still holds its input and "
        "additional_input (AP-STEP-004's facts)",
        operation="getAgentTaskStep",
        mutate=_text_plain,
    ),
    # seen on AutoGPT Forge (docs/interop-autogpt-forge.md): the body is still JSON, parsed for the
    # schema requirement and the round trip; only the label's requirement fails
    _fault(
        "ap-step-read-unlabelled",
        ("AP-SCHEMA-003",),
        "getAgentTaskStep answers its JSON with no Content-Type header: the step read back still matches its "
        "schema and holds its input and additional_input (AP-SCHEMA-005's and AP-STEP-004's facts)",
        operation="getAgentTaskStep",
        mutate=_unlabelled,
    ),
    # the latitude of HTTP, JSON (mockserver/wire.py): passing controls
    *wire_controls(_fault, "ap", None),
    *ACROSS,
)
