"""The Agent Protocol requirements: the reference mock passes them all, each fault is caught, and
the helpers (strict JSON equality, Content-Disposition, page arithmetic) do what the checks assume."""

from __future__ import annotations

import json
import os
import re
import uuid
from collections.abc import Callable
from email.parser import BytesParser
from email.policy import HTTP
from pathlib import Path
from typing import Any

import httpx
import pytest
from aiohttp import web

from conformance.check.context import CheckFailed, Context
from conformance.check.http import Client, Limits
from conformance.phases.scenario import run_check
from conformance.protocols.agent_protocol import requirements as ap
from conformance.run.options import RunOptions
from conformance.run.suites import suite
from conformance.verdicts.requirements import Level
from conformance.verdicts.results import RequirementResult, RunResult, Status
from mockserver import MockConfig
from mockserver.app import APIS
from mockserver.embedded import EmbeddedServer
from mockserver.protocols.agent_protocol import FAULTS
from specs.documents import load
from specs.schemas import SchemaSet

PROTOCOL = "agent-protocol"
FAULTS_BY_NAME = {f.name: f for f in FAULTS}


def statuses(result: RunResult) -> dict[str, Status]:
    return {r.requirement.id: r.status for r in result.results}


def check(rid: str) -> Callable[[Context], None]:
    fn = suite(PROTOCOL).registry.get(rid).run
    assert fn is not None
    return fn


# -- the reference mock passes -------------------------------------------------------------------


def test_the_registry() -> None:
    protocol_suite = suite(PROTOCOL)
    scenario = [c.requirement for c in protocol_suite.registry if c.run is not None]
    assert 12 <= len(scenario) <= 24
    assert protocol_suite.streaming_operations == ()
    assert not protocol_suite.needs_auth  # the document declares no security
    assert all(re.fullmatch(r"AP-[A-Z]+-\d{3}", r.id) and r.ref and r.statement for r in scenario)
    assert {r.id for r in scenario if r.level is Level.SHOULD} == {
        "AP-ARTIFACT-003",
        "AP-ARTIFACT-005",
        "AP-ARTIFACT-006",
        "AP-PAGE-004",
    }
    assert scenario[0].id == "AP-TASK-001"  # the original example keeps its id


def test_every_reference_into_the_document_resolves() -> None:
    document = load(PROTOCOL).raw
    for check_ in suite(PROTOCOL).registry:
        ref = check_.requirement.ref
        if not ref.startswith(ap.DOC + "#"):
            continue
        node: Any = document
        for token in ref.split("#", 1)[1].split(" ", 1)[0].strip("/").split("/"):
            key = token.replace("~1", "/").replace("~0", "~")
            node = node[int(key)] if isinstance(node, list) else node[key]
        assert node, check_.requirement.id


# -- every fault is caught -----------------------------------------------------------------------


# -- single checks against hand-made targets -----------------------------------------------------


def context_for(handler: Callable[[httpx.Request], httpx.Response]) -> Context:
    spec = load(PROTOCOL)
    ctx = Context(spec, SchemaSet(spec.raw), RunOptions(protocol=PROTOCOL, base_url="http://target"), Limits(timeout=2))
    ctx.client = Client("http://target", ctx.limits, transport=httpx.MockTransport(handler))
    return ctx


def multipart_fields(request: httpx.Request) -> dict[str, tuple[str, bytes]]:
    """name -> (file name or "", bytes) of a multipart/form-data request."""
    head = f"Content-Type: {request.headers['content-type']}\r\n\r\n".encode()
    message = BytesParser(policy=HTTP).parsebytes(head + request.read())
    fields = {}
    for part in message.iter_parts():
        data = part.get_payload(decode=True)
        assert isinstance(data, bytes)
        fields[str(part.get_param("name", header="content-disposition"))] = (part.get_filename() or "", data)
    return fields


def upload_target(
    workspace: Path | None = None, refusal: int = 0, unreadable: bool = False, by_name: bool = False
) -> Callable[[httpx.Request], httpx.Response]:
    """A minimal agent. With ``refusal`` it answers uploads naming '..' with that status and keeps
    the rest by id; with a ``workspace`` it writes each upload to ``workspace/<task>/<relative_path>/
    <file name>`` with os.path.join, as the Agent Protocol SDK does, and serves it from there
    (``unreadable``: a download refuses, 500, a path that left its task's folder; ``by_name``:
    relative_path ignored, ``workspace/<task>/<file name>``)."""
    tasks: dict[str, dict[str, tuple[dict[str, Any], bytes | str]]] = {}

    def handle(request: httpx.Request) -> httpx.Response:
        parts = request.url.path.split("/")[4:]  # after /ap/v1/agent
        if request.method == "POST" and parts == ["tasks"]:
            task_id = str(uuid.uuid4())
            tasks[task_id] = {}
            return httpx.Response(200, json={"task_id": task_id, "artifacts": []})
        task = tasks[parts[1]]
        if request.method == "POST":
            form = multipart_fields(request)
            name, data = form["file"]
            relative_path = form["relative_path"][1].decode() if "relative_path" in form else None
            if refusal and (".." in name or ".." in (relative_path or "")):
                return httpx.Response(refusal, json={"message": "no"})
            artifact_id = str(uuid.uuid4())
            view = {
                "artifact_id": artifact_id,
                "agent_created": False,
                "file_name": name,
                "relative_path": relative_path,
            }
            stored: bytes | str = data
            if workspace is not None:
                path = os.path.join(workspace, parts[1], "" if by_name else relative_path or "", name)
                os.makedirs(os.path.dirname(path), exist_ok=True)
                with open(path, "wb") as file:
                    file.write(data)
                stored = path
            task[artifact_id] = (view, stored)
            return httpx.Response(200, json=view)
        if len(parts) == 4:
            content = task[parts[3]][1]
            if isinstance(content, str):
                inside = os.path.realpath(content).startswith(os.path.join(os.path.realpath(workspace or ""), parts[1]))
                if unreadable and not inside:
                    return httpx.Response(500, text="Internal Server Error")
                with open(content, "rb") as file:
                    content = file.read()
            return httpx.Response(200, content=content, headers={"Content-Type": "application/octet-stream"})
        items = [view for view, _ in task.values()]
        page = {"total_items": len(items), "total_pages": 1 if items else 0, "current_page": 1, "page_size": 10}
        return httpx.Response(200, json={"artifacts": items, "pagination": page})

    return handle


def run_traversal(ctx: Context) -> RequirementResult:
    return run_check(suite(PROTOCOL).registry.get("AP-ARTIFACT-006"), ctx)


@pytest.mark.parametrize("refusal", [400, 403, 415, 422])
def test_refusing_traversal_with_any_4xx_passes(refusal: int) -> None:
    result = run_traversal(context_for(upload_target(refusal=refusal)))
    assert result.status is Status.PASSED, result.message


def test_storing_crafted_names_as_plain_labels_passes() -> None:
    result = run_traversal(context_for(upload_target()))
    assert result.status is Status.PASSED, result.message


@pytest.mark.parametrize("unreadable", [False, True], ids=["readable", "unreadable"])
def test_traversal_on_disk_fails_and_writes_only_inside_the_workspace(tmp_path: Path, unreadable: bool) -> None:
    """A server that joins the names to a path overwrites the other task's file: the check reports
    that (failed, not blocked), even when its own crafted upload cannot be read back; and every
    file it made the server write lies in the server's workspace."""
    workspace = tmp_path / "workspace"
    result = run_traversal(context_for(upload_target(workspace, unreadable=unreadable)))
    assert result.status is Status.FAILED and result.blocked_by is None, result.message
    assert "overwrote it" in result.message
    assert [p.name for p in tmp_path.iterdir()] == ["workspace"]


def test_traversal_by_file_name_alone_fails_and_writes_only_inside_the_workspace(tmp_path: Path) -> None:
    """A server that ignores relative_path keeps the other task's file where the suite's first
    aim missed it (issue 34): every '..' is aimed at that place too."""
    workspace = tmp_path / "workspace"
    result = run_traversal(context_for(upload_target(workspace, by_name=True)))
    assert result.status is Status.FAILED and result.blocked_by is None, result.message
    assert "overwrote it" in result.message
    assert [p.name for p in tmp_path.iterdir()] == ["workspace"]


def test_traversal_aims_at_the_layout_the_victims_upload_answer_names_too() -> None:
    """A server that ignores relative_path keeps the victim by name alone (answered ""): the
    attacks aim at <victim>/victim.txt as well as at the folder sent; a relative_path answered
    as sent, or one that itself climbs, adds no layout."""
    assert ap.victim_folders({"relative_path": ""}) == []  # by name alone: a layout always aimed at
    assert ap.victim_folders({"relative_path": "/shared/"}) == []
    assert ap.victim_folders({"relative_path": "../elsewhere"}) == []
    assert ap.victim_folders(None) == []
    assert ap.victim_folders({"relative_path": "uploads/shared"}) == ["uploads/shared"]
    names = {name for _, name, _ in ap.traversal_attempts("V")}
    assert {"../V/victim.txt", "%2E%2E%2FV%2Fvictim.txt", "..\\V\\victim.txt"} <= names
    assert {"../V/shared/victim.txt", "../V/uploads/shared/victim.txt"} <= {
        name for _, name, _ in ap.traversal_attempts("V", ["uploads/shared"])
    }
    relative = {rel for _, _, rel in ap.traversal_attempts("V")}
    assert {"../V/shared", "../V"} <= relative


def artifact_list(honours_paging: bool) -> Callable[[httpx.Request], httpx.Response]:
    """15 artifacts; a server that ignores current_page and page_size answers its first 10 to
    every page, and says so in its pagination (AutoGPT Forge's reading of page and pageSize)."""
    items = [{"artifact_id": f"a{n}", "agent_created": False, "file_name": f"f{n}"} for n in range(15)]

    def handle(request: httpx.Request) -> httpx.Response:
        current, size = int(request.url.params["current_page"]), int(request.url.params["page_size"])
        if not honours_paging:
            current, size = 1, 10
        page = items[(current - 1) * size : current * size]
        pagination = {"total_items": 15, "total_pages": -(-15 // size), "current_page": current, "page_size": size}
        return httpx.Response(200, json={"artifacts": page, "pagination": pagination})

    return handle


@pytest.mark.parametrize("honours_paging", [True, False], ids=["paged", "paging-ignored"])
def test_a_list_walk_stops_where_a_page_is_not_the_one_asked(honours_paging: bool) -> None:
    """What lies past such a page is not observed (the paging requirements' subject), never
    counted twice: the first page read again would list every item twice and the rest as missing."""
    walked = ap.listing(
        context_for(artifact_list(honours_paging)), "/t/artifacts", "listAgentTaskArtifacts", "artifacts"
    )
    ids = [a["artifact_id"] for a in walked.items]
    assert len(ids) == len(set(ids)) == (15 if honours_paging else 10)
    assert walked.complete is honours_paging


class KeptApp(EmbeddedServer):
    """The embedded mock, its application kept so that a test can look into its stores."""

    app: web.Application

    def make_app(self) -> web.Application:
        self.app = super().make_app()
        return self.app


@pytest.mark.parametrize("fault", sorted(n for n in FAULTS_BY_NAME if "traversal" in n))
def test_traversal_fails_against_each_fault_and_leaves_nothing_outside_the_workspace(fault: str) -> None:
    with KeptApp(MockConfig(protocols=(PROTOCOL,), faults=(fault,))) as server:
        ctx = context_for(lambda _: httpx.Response(500))
        ctx.client = Client(server.url, ctx.limits)
        result = run_traversal(ctx)
        store = server.app[APIS][PROTOCOL].stores[0][0]
    assert result.status is Status.FAILED and result.blocked_by is None, result.message
    assert store.outside == {}


def test_pages_that_round_down_fail() -> None:
    def handle(request: httpx.Request) -> httpx.Response:
        size = int(request.url.params["page_size"])
        page = int(request.url.params["current_page"])
        items = [{"task_id": str(i), "artifacts": []} for i in range(7)][(page - 1) * size : page * size]
        return httpx.Response(
            200,
            json={
                "tasks": items,
                "pagination": {"total_items": 7, "total_pages": 7 // size, "current_page": page, "page_size": size},
            },
        )

    with pytest.raises(CheckFailed, match="pagination"):
        ap.walk(context_for(handle), ap.TASKS, "listAgentTasks", "tasks", 3)


@pytest.mark.parametrize("fault", ["ap-page-empty-past-3", None])
def test_the_task_walk_passes_page_six_on_a_server_that_holds_nothing_else(fault: str | None) -> None:
    """A list that serves nothing past its third page fails AP-PAGE-001 even where the check's own
    three tasks are all the server holds (beside another fault that leaves fewer tasks, or alone);
    the clean mock, the control, passes."""
    with EmbeddedServer(MockConfig(protocols=(PROTOCOL,), faults=(fault,) if fault else ())) as server:
        ctx = context_for(lambda _: httpx.Response(500))
        ctx.client = Client(server.url, ctx.limits)
        result = run_check(suite(PROTOCOL).registry.get("AP-PAGE-001"), ctx)
        listed = ctx.client.get(ap.TASKS).json()["pagination"]["total_items"]
    assert result.status is (Status.FAILED if fault else Status.PASSED), result.message
    assert listed >= 2 * ap.FEWEST_WALKED - 1


# -- helpers -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        ('attachment; filename="data.bin"', ("attachment", "data.bin")),
        ("attachment; filename=data.bin", ("attachment", "data.bin")),
        ('Attachment; filename="quote\\"d.txt"', ("attachment", 'quote"d.txt')),
        (
            "attachment; filename=\"r_sum_.txt\"; filename*=UTF-8''r%C3%A9sum%C3%A9.txt",
            ("attachment", "r\u00e9sum\u00e9.txt"),
        ),
        ("inline; filename*=utf-8''a%20b", ("inline", "a b")),
        ("attachment; filename=\"x\"; filename*=UTF-8''%FF", ("attachment", "x")),  # undecodable: fall back
        ("attachment", ("attachment", None)),
    ],
)
def test_content_disposition(header: str, expected: tuple[str, str | None]) -> None:
    assert ap.content_disposition(header) == expected


@pytest.mark.parametrize(
    ("total", "size", "lengths"),
    [
        (0, 10, []),
        (1, 10, [1]),
        (10, 10, [10]),
        (11, 10, [10, 1]),
        (7, 3, [3, 3, 1]),
        (4, 1, [1, 1, 1, 1]),
    ],
)
def test_page_lengths(total: int, size: int, lengths: list[int]) -> None:
    assert ap.page_lengths(total, size) == lengths


@pytest.mark.parametrize("total", [0, 1, 2, 3, 4, 6, 12, 20, 40, 41, 60, 399, 400, 5000])
def test_walk_size_bounds_the_walk_and_leaves_a_partial_last_page(total: int) -> None:
    size = ap.walk_size(total)
    assert size >= 2 and len(ap.page_lengths(total, size)) <= ap.MAX_PAGES
    if total > size:
        assert total % size != 0


def test_ids_are_quoted_into_one_segment() -> None:
    assert ap.task_path("a/../b", "steps", "x y") == "/ap/v1/agent/tasks/a%2F..%2Fb/steps/x%20y"


def test_payload_holds_the_awkward_bytes() -> None:
    data = ap.payload(0)
    assert b"\x00" in data and b"\xff" in data and b"\r\n--" in data and data == ap.payload(0) != ap.payload(1)
    with pytest.raises(UnicodeDecodeError):
        data.decode("utf-8")


def test_step_bodies_carry_nested_values() -> None:
    body = ap.step_body(0)
    assert json.loads(json.dumps(body)) == body and body["additional_input"]["nested"]["list"][3] == {"x": 1.5}


@pytest.mark.parametrize("fault", ["ap-upload-folder-collision-500", "ap-upload-empty-refused"])
def test_an_edge_upload_the_server_did_not_store_blocks_none_of_what_it_stored(fault: str) -> None:
    """An edge name a server answers 5xx (or refuses, though it must not) fails AP-ARTIFACT-001; the
    checks that judge what was stored still judge every other upload, and pass, instead of being
    blocked by the one name (the Agent Protocol SDK's Content-Disposition was never judged so)."""
    from conformance.engine.runner import run

    stored = ("AP-ARTIFACT-002", "AP-ARTIFACT-003", "AP-ARTIFACT-004")
    with EmbeddedServer(MockConfig(protocols=(PROTOCOL,), faults=(fault,))) as server:
        result = run(
            RunOptions(protocol=PROTOCOL, base_url=server.url, phases=("scenario",), only=("AP-ARTIFACT-001", *stored))
        )
    got = {r.requirement.id: r for r in result.results}
    assert got["AP-ARTIFACT-001"].status is Status.FAILED, got["AP-ARTIFACT-001"].message
    for rid in stored:
        assert got[rid].status is Status.PASSED and got[rid].blocked_by is None, (rid, got[rid].message)
