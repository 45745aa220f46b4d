"""Agent Protocol v1 on the mock: tasks, input-driven steps, artifacts, limits, and the document."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from typing import Any
from urllib.parse import quote

import httpx
import pytest

from conformance.contrib.httpx import validate_exchange
from mockserver import MockConfig, MockLimits
from mockserver.embedded import EmbeddedServer
from specs.documents import load

Serve = Callable[..., AbstractContextManager[EmbeddedServer]]

TASKS = "/ap/v1/agent/tasks"
CLIENT_HEADERS = {"Accept": "application/json", "Content-Type": "application/json"}
"""What agent-protocol-client sends on every call, downloads and empty POSTs included."""


@pytest.fixture(scope="module")
def mock_url() -> Iterator[str]:
    """Only this protocol, so these tests do not depend on the other modules."""
    with EmbeddedServer(MockConfig(protocols=("agent-protocol",))) as server:
        yield server.url


def new_task(http: httpx.Client, body: dict[str, Any] | None = None) -> dict[str, Any]:
    response = http.post(TASKS, json=body if body is not None else {"input": "write hello"})
    assert response.status_code == 200, response.text
    return dict(response.json())


def run_to_end(http: httpx.Client, task_id: str, bound: int = 10) -> list[dict[str, Any]]:
    steps: list[dict[str, Any]] = []
    for _ in range(bound):
        response = http.post(f"{TASKS}/{task_id}/steps", json={})
        assert response.status_code == 200, response.text
        steps.append(response.json())
        if steps[-1]["is_last"]:
            return steps
    raise AssertionError(f"no last step within {bound} steps")


def multipart(*parts: tuple[str, bytes], boundary: str = "b0und4ry") -> tuple[bytes, dict[str, str]]:
    """A hand-built body, so tests control the exact Content-Disposition of each part."""
    chunks = [
        f"--{boundary}\r\nContent-Disposition: form-data; {disposition}\r\n\r\n".encode() + data + b"\r\n"
        for disposition, data in parts
    ]
    body = b"".join(chunks) + f"--{boundary}--\r\n".encode()
    return body, {"Content-Type": f"multipart/form-data; boundary={boundary}"}


def upload(http: httpx.Client, task_id: str, *parts: tuple[str, bytes]) -> httpx.Response:
    body, headers = multipart(*parts)
    return http.post(f"{TASKS}/{task_id}/artifacts", content=body, headers=headers)


def pagination(total_items: int, total_pages: int, current_page: int, page_size: int) -> dict[str, int]:
    return {
        "total_items": total_items,
        "total_pages": total_pages,
        "current_page": current_page,
        "page_size": page_size,
    }


def assert_error(response: httpx.Response, status: int, *words: str) -> None:
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/json")
    body = response.json()
    assert isinstance(body.get("message"), str) and body["message"]
    if status == 404:
        assert set(body) == {"message"}
    for word in words:
        assert word in body["message"]


# --- tasks ---------------------------------------------------------------------------------------


def test_create_task_echoes_input_and_defaults_additional_input(http: httpx.Client) -> None:
    plain = new_task(http, {"input": "write hello"})
    assert uuid.UUID(plain["task_id"]).version == 4
    assert plain == {"task_id": plain["task_id"], "input": "write hello", "additional_input": {}, "artifacts": []}
    extra = {"debug": False, "nested": {"list": [1, "two", None, {"x": 1.5}]}, "empty": {}}
    echoed = new_task(http, {"input": None, "additional_input": extra})
    assert echoed["additional_input"] == extra and echoed["input"] is None
    assert echoed["task_id"] != plain["task_id"]


def test_create_task_without_a_body(http: httpx.Client) -> None:
    for response in (
        http.post(TASKS),
        http.post(TASKS, headers=CLIENT_HEADERS, content=b""),  # the official client's empty POST
    ):
        assert response.status_code == 200, response.text
        assert response.json()["input"] is None and response.json()["additional_input"] == {}


@pytest.mark.parametrize(
    "content",
    [b'{"input": 5}', b'{"additional_input": "x"}', b'{"additional_input": null}', b"[]", b"{not json"],
)
def test_create_task_rejects_invalid_bodies(http: httpx.Client, content: bytes) -> None:
    assert_error(http.post(TASKS, content=content, headers=CLIENT_HEADERS), 422)


def test_get_task_and_unknown_task(http: httpx.Client) -> None:
    task = new_task(http)
    response = http.get(f"{TASKS}/{task['task_id']}", headers=CLIENT_HEADERS)
    assert response.status_code == 200 and response.json() == task
    assert_error(http.get(f"{TASKS}/{uuid.uuid4()}"), 404, "not found")


def test_list_tasks_paginates_in_creation_order(serve: Serve) -> None:
    with serve(protocols=("agent-protocol",)) as server, httpx.Client(base_url=server.url) as http:
        empty = http.get(TASKS).json()
        assert empty == {"tasks": [], "pagination": pagination(0, 0, 1, 10)}
        ids = [new_task(http, {"input": f"task {i}"})["task_id"] for i in range(23)]
        first = http.get(TASKS, headers=CLIENT_HEADERS).json()
        assert [t["task_id"] for t in first["tasks"]] == ids[:10]
        assert first["pagination"] == pagination(23, 3, 1, 10)
        last = http.get(TASKS, params={"current_page": 3}).json()
        assert [t["task_id"] for t in last["tasks"]] == ids[20:]
        middle = http.get(TASKS, params={"current_page": 2, "page_size": 5}).json()
        assert [t["task_id"] for t in middle["tasks"]] == ids[5:10]
        assert middle["pagination"] == pagination(23, 5, 2, 5)
        past = http.get(TASKS, params={"current_page": 4}).json()
        assert past == {"tasks": [], "pagination": pagination(23, 3, 4, 10)}
        whole = http.get(TASKS, params={"page_size": 100}).json()
        assert [t["task_id"] for t in whole["tasks"]] == ids and whole["pagination"]["total_pages"] == 1


@pytest.mark.parametrize(
    "params",
    [
        {"current_page": 0},
        {"page_size": 0},
        {"page_size": -1},
        {"current_page": "x"},
        {"page_size": 2**31},
        {"current_page": 2**31},
    ],  # the parameters are format: int32
)
@pytest.mark.parametrize("suffix", ["", "/{id}/steps", "/{id}/artifacts"])
def test_lists_reject_invalid_paging(http: httpx.Client, params: dict[str, Any], suffix: str) -> None:
    task_id = new_task(http)["task_id"]
    assert_error(http.get(TASKS + suffix.format(id=task_id), params=params), 422, next(iter(params)))


# --- steps ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("task_input", "count"),
    [(None, 2), ("one", 3), ("write hello", 4), ("a b c", 2), ("a b c d", 3), ("a b c d e", 4)],
)
def test_steps_follow_an_input_driven_plan(http: httpx.Client, task_input: str | None, count: int) -> None:
    task_id = new_task(http, {"input": task_input})["task_id"]
    steps = run_to_end(http, task_id)
    assert len(steps) == count
    assert [s["is_last"] for s in steps] == [False] * (count - 1) + [True]
    assert steps[0]["name"] == "Read the task" and steps[-1]["name"] == "Write output.txt"
    assert [s["name"] for s in steps[1:-1]] == [f"Work on part {i}" for i in range(1, count - 1)]
    for number, step in enumerate(steps, 1):
        assert step["task_id"] == task_id and step["status"] == "completed"
        assert uuid.UUID(step["step_id"]).version == 4
        assert step["additional_output"] == {"step_number": number, "total_steps": count}
    assert len({s["step_id"] for s in steps}) == count
    # A finished task keeps executing: each further POST is an empty step that is_last again.
    after = http.post(f"{TASKS}/{task_id}/steps", json={"input": "more?", "additional_input": {"k": [1]}})
    assert after.status_code == 200, after.text
    extra = after.json()
    assert extra["name"] == "Nothing left to do" and extra["is_last"] is True and extra["artifacts"] == []
    assert (extra["input"], extra["additional_input"], extra["status"]) == ("more?", {"k": [1]}, "completed")
    assert extra["output"] == "The task is complete; this step did nothing. (step input: more?)"
    assert extra["step_id"] not in {s["step_id"] for s in steps}
    listed = http.get(f"{TASKS}/{task_id}/steps", params={"page_size": 10}).json()
    assert listed["steps"] == [*steps, extra]
    assert len(http.get(f"{TASKS}/{task_id}").json()["artifacts"]) == 1  # output.txt is written once


def test_same_input_gives_the_same_plan_and_outputs(http: httpx.Client) -> None:
    def trace() -> list[tuple[str, str]]:
        task_id = new_task(http, {"input": "Write Washington to a file"})["task_id"]
        return [(s["name"], s["output"]) for s in run_to_end(http, task_id)]

    first = trace()
    assert first == trace()
    assert first == [
        ("Read the task", "Read the task: 5 word(s), 4 step(s) planned."),
        ("Work on part 1", "Part 1: Write to file"),
        ("Work on part 2", "Part 2: Washington a"),
        ("Write output.txt", "Result: Write Washington to a file"),
    ]


def test_step_echoes_its_input_and_additional_input(http: httpx.Client) -> None:
    task_id = new_task(http, {"input": "one"})["task_id"]
    extra = {"file_to_refactor": "models.py", "deep": [{"a": None}]}
    step = http.post(f"{TASKS}/{task_id}/steps", json={"input": "go on", "additional_input": extra}).json()
    assert step["input"] == "go on" and step["additional_input"] == extra
    assert step["output"] == "Read the task: 1 word(s), 3 step(s) planned. (step input: go on)"
    # The official client's empty POST: JSON content type, no body at all.
    bare = http.post(f"{TASKS}/{task_id}/steps", headers=CLIENT_HEADERS, content=b"")
    assert bare.status_code == 200, bare.text
    assert bare.json()["input"] is None and bare.json()["additional_input"] == {}
    assert bare.json()["output"] == "Part 1: one"


def test_execute_step_errors(http: httpx.Client) -> None:
    assert_error(http.post(f"{TASKS}/{uuid.uuid4()}/steps", json={}), 404, "not found")
    task_id = new_task(http)["task_id"]
    for bad in (b'{"input": 1}', b'{"additional_input": []}', b"nope"):
        assert_error(http.post(f"{TASKS}/{task_id}/steps", content=bad, headers=CLIENT_HEADERS), 422)
    assert http.get(f"{TASKS}/{task_id}/steps").json()["pagination"]["total_items"] == 0


def test_last_step_writes_a_downloadable_output_artifact(http: httpx.Client) -> None:
    task_id = new_task(http, {"input": "write hello"})["task_id"]
    steps = run_to_end(http, task_id)
    assert all(s["artifacts"] == [] for s in steps[:-1])
    [artifact] = steps[-1]["artifacts"]
    assert artifact["agent_created"] is True and artifact["file_name"] == "output.txt"
    assert http.get(f"{TASKS}/{task_id}").json()["artifacts"] == [artifact]
    assert http.get(f"{TASKS}/{task_id}/artifacts").json()["artifacts"] == [artifact]
    download = http.get(f"{TASKS}/{task_id}/artifacts/{artifact['artifact_id']}", headers=CLIENT_HEADERS)
    assert download.status_code == 200
    assert download.content == steps[-1]["output"].encode() == b"Result: write hello"


def test_list_and_get_steps(http: httpx.Client) -> None:
    task_id = new_task(http, {"input": "write hello"})["task_id"]
    steps = run_to_end(http, task_id)
    page = http.get(f"{TASKS}/{task_id}/steps", params={"current_page": 2, "page_size": 3}).json()
    assert page == {"steps": steps[3:], "pagination": pagination(4, 2, 2, 3)}
    default = http.get(f"{TASKS}/{task_id}/steps", headers=CLIENT_HEADERS).json()
    assert default["steps"] == steps and default["pagination"]["page_size"] == 10
    for step in steps:
        got = http.get(f"{TASKS}/{task_id}/steps/{step['step_id']}", headers=CLIENT_HEADERS)
        assert got.status_code == 200 and got.json() == step
    other = new_task(http)["task_id"]
    assert_error(http.get(f"{TASKS}/{other}/steps/{steps[0]['step_id']}"), 404, "not found")
    assert_error(http.get(f"{TASKS}/{task_id}/steps/{uuid.uuid4()}"), 404, "not found")
    assert_error(http.get(f"{TASKS}/{uuid.uuid4()}/steps/{steps[0]['step_id']}"), 404, "not found")
    assert_error(http.get(f"{TASKS}/{uuid.uuid4()}/steps"), 404, "not found")


# --- artifacts -----------------------------------------------------------------------------------


def test_upload_then_download_exact_bytes(http: httpx.Client) -> None:
    task_id = new_task(http)["task_id"]
    data = bytes(range(256)) * 3
    # The official client's order: relative_path first, then file.
    response = upload(
        http, task_id, ('name="relative_path"', b"python/code/"), ('name="file"; filename="data.bin"', data)
    )
    assert response.status_code == 200, response.text
    artifact = response.json()
    assert uuid.UUID(artifact["artifact_id"]).version == 4
    assert artifact == {
        "artifact_id": artifact["artifact_id"],
        "agent_created": False,
        "file_name": "data.bin",
        "relative_path": "python/code/",
    }
    download = http.get(f"{TASKS}/{task_id}/artifacts/{artifact['artifact_id']}", headers=CLIENT_HEADERS)
    assert download.status_code == 200
    assert download.headers["content-type"] == "application/octet-stream"
    assert download.headers["content-disposition"] == 'attachment; filename="data.bin"'
    assert download.content == data
    no_path = upload(http, task_id, ('name="file"; filename="notes.md"', b"# hi")).json()
    assert no_path["relative_path"] is None and no_path["file_name"] == "notes.md"
    assert http.get(f"{TASKS}/{task_id}").json()["artifacts"] == [artifact, no_path]


def test_a_listed_task_is_the_task_as_it_is_now(serve: Serve) -> None:
    """The listing reuses each task's encoding: every change a task can go through shows in it."""
    with serve(protocols=("agent-protocol",)) as server, httpx.Client(base_url=server.url) as http:
        task_id = new_task(http, {"input": "a b c", "additional_input": {"k": [1]}})["task_id"]

        def listed() -> Any:
            return http.get(TASKS).json()["tasks"]

        assert listed() == [http.get(f"{TASKS}/{task_id}").json()]  # encoded here, with no artifact
        upload(http, task_id, ('name="file"; filename="in.txt"', b"in"))
        assert listed() == [http.get(f"{TASKS}/{task_id}").json()] and len(listed()[0]["artifacts"]) == 1
        run_to_end(http, task_id)  # the last step makes an artifact of the agent's
        assert listed() == [http.get(f"{TASKS}/{task_id}").json()] and len(listed()[0]["artifacts"]) == 2


def test_task_artifacts_list_uploaded_and_agent_created(http: httpx.Client) -> None:
    task_id = new_task(http, {"input": "a b c"})["task_id"]
    uploaded = upload(http, task_id, ('name="file"; filename="in.txt"', b"in")).json()
    made = run_to_end(http, task_id)[-1]["artifacts"][0]
    assert http.get(f"{TASKS}/{task_id}").json()["artifacts"] == [uploaded, made]
    page = http.get(f"{TASKS}/{task_id}/artifacts", params={"current_page": 2, "page_size": 1}).json()
    assert page == {"artifacts": [made], "pagination": pagination(2, 2, 2, 1)}
    past = http.get(f"{TASKS}/{task_id}/artifacts", params={"current_page": 3, "page_size": 1}).json()
    assert past["artifacts"] == [] and past["pagination"]["total_items"] == 2
    assert_error(http.get(f"{TASKS}/{uuid.uuid4()}/artifacts"), 404, "not found")


@pytest.mark.parametrize(
    ("file_name", "relative_path"),
    [
        ("victim.txt", "../{victim}/shared"),
        ("victim.txt", "../../{victim}/shared"),
        ("victim.txt", "/etc"),
        ("victim.txt", "..\\{victim}\\shared"),
        ("victim.txt", "C:/Windows"),
        ("../{victim}/shared/victim.txt", None),
        ("..", "a\x00b"),
        ("v.txt", "a\r\nb"),
        ("v.txt", "x" * 5000),
    ],
)
def test_names_are_stored_verbatim_and_never_resolved(
    http: httpx.Client, file_name: str, relative_path: str | None
) -> None:
    """Names are labels here, not paths: a crafted one is kept as sent and reaches no other task."""
    victim = new_task(http)["task_id"]
    kept = upload(http, victim, ('name="relative_path"', b"shared"), ('name="file"; filename="victim.txt"', b"mine"))
    name = file_name.format(victim=victim)
    parts = [('name="relative_path"', relative_path.format(victim=victim).encode())] if relative_path else []
    attacker = new_task(http)["task_id"]
    response = upload(http, attacker, *parts, (f'name="file"; filename="{name}"', b"theirs"))
    assert response.status_code == 200, response.text
    stored = response.json()
    assert stored["file_name"] == name
    assert stored["relative_path"] == (relative_path.format(victim=victim) if relative_path else None)
    assert http.get(f"{TASKS}/{attacker}/artifacts/{stored['artifact_id']}").content == b"theirs"
    assert http.get(f"{TASKS}/{victim}/artifacts/{kept.json()['artifact_id']}").content == b"mine"
    assert http.get(f"{TASKS}/{victim}/artifacts").json()["artifacts"] == [kept.json()]


@pytest.mark.parametrize(
    ("disposition", "stored", "served"),
    [
        ("filename*=UTF-8''a%0D%0Ab.txt", "a\r\nb.txt", "a__b.txt"),
        ("filename*=UTF-8''a%00b", "a\x00b", "a_b"),
        ('filename="dir/x.txt"', "dir/x.txt", "dir_x.txt"),
        ('filename=".."', "..", "download"),
    ],
)
def test_odd_file_names_are_kept_and_downloads_name_them_safely(
    http: httpx.Client, disposition: str, stored: str, served: str
) -> None:
    """Stored verbatim; served as one safe path segment, in filename and filename* alike."""
    task_id = new_task(http)["task_id"]
    artifact = upload(http, task_id, (f'name="file"; {disposition}', b"x")).json()
    assert artifact["file_name"] == stored
    header = http.get(f"{TASKS}/{task_id}/artifacts/{artifact['artifact_id']}").headers["content-disposition"]
    assert header == f'attachment; filename="{served}"'


def test_long_file_names_are_served_bounded_keeping_the_extension(http: httpx.Client) -> None:
    task_id = new_task(http)["task_id"]
    name = "r\u00e9sum\u00e9-" * 400 + ".pdf"
    artifact = upload(http, task_id, (f"name=\"file\"; filename*=UTF-8''{quote(name, safe='')}", b"x")).json()
    assert artifact["file_name"] == name
    download = http.get(f"{TASKS}/{task_id}/artifacts/{artifact['artifact_id']}")
    assert download.status_code == 200 and download.content == b"x"
    header = download.headers["content-disposition"]
    assert len(header) < 2000 and header.endswith(".pdf")


@pytest.mark.parametrize("disposition", ['filename=""', b'filename="\xff\xfe.txt"'.decode("latin-1")])
def test_upload_rejects_empty_or_undecodable_file_names(http: httpx.Client, disposition: str) -> None:
    task_id = new_task(http)["task_id"]
    body, headers = multipart((f'name="file"; {disposition}', b"x"))
    body = body.replace(disposition.encode("utf-8"), disposition.encode("latin-1"))  # raw bytes, not UTF-8
    assert_error(http.post(f"{TASKS}/{task_id}/artifacts", content=body, headers=headers), 422, "file name")
    assert http.get(f"{TASKS}/{task_id}").json()["artifacts"] == []


def test_part_names_with_control_characters_are_read(http: httpx.Client) -> None:
    """Browsers escape only CR, LF and '"' in part names; other control characters arrive raw."""
    task_id = new_task(http)["task_id"]
    response = upload(http, task_id, ('name="x\x1ey\x04"', b"ignored"), ('name="file"; filename="f\x7f.txt"', b"x"))
    assert response.status_code == 200, response.text
    assert response.json()["file_name"] == "f\x7f.txt"


def test_upload_requires_a_file_part(http: httpx.Client) -> None:
    task_id = new_task(http)["task_id"]
    assert_error(upload(http, task_id, ('name="relative_path"', b"a")), 422, "file")
    assert_error(upload(http, task_id, ('name="file"', b"no filename")), 422, "file")
    assert_error(upload(http, task_id, ('name="file"; filename="a"\r\nno colon here', b"x")), 422, "malformed")
    # The document does not require this body: without one the request is valid, uploads nothing
    # and stores nothing.
    for headers in ({}, {"Content-Type": "multipart/form-data; boundary=x"}):
        no_body = http.post(f"{TASKS}/{task_id}/artifacts", headers=headers)
        assert no_body.status_code == 204 and no_body.content == b""
    assert http.get(f"{TASKS}/{task_id}").json()["artifacts"] == []
    assert_error(upload(http, str(uuid.uuid4()), ('name="file"; filename="a"', b"a")), 404, "not found")


def test_download_names_are_sanitized(http: httpx.Client) -> None:
    task_id = new_task(http)["task_id"]
    cases = {
        'filename="quote\\"d.txt"': ("attachment; filename=\"quote_d.txt\"; filename*=UTF-8''quote%22d.txt"),
        "filename*=UTF-8''r%C3%A9sum%C3%A9.txt": (
            "attachment; filename=\"r_sum_.txt\"; filename*=UTF-8''r%C3%A9sum%C3%A9.txt"
        ),
        'filename="../up.txt"': 'attachment; filename=".._up.txt"',
    }
    for disposition, expected in cases.items():
        artifact = upload(http, task_id, (f'name="file"; {disposition}', b"body")).json()
        download = http.get(f"{TASKS}/{task_id}/artifacts/{artifact['artifact_id']}")
        assert download.headers["content-disposition"] == expected
        assert download.content == b"body"


def test_download_errors(http: httpx.Client) -> None:
    task_id = new_task(http)["task_id"]
    artifact = upload(http, task_id, ('name="file"; filename="a.txt"', b"a")).json()
    other = new_task(http)["task_id"]
    for path in (
        f"{TASKS}/{task_id}/artifacts/{uuid.uuid4()}",
        f"{TASKS}/{other}/artifacts/{artifact['artifact_id']}",  # another task's artifact
        f"{TASKS}/{uuid.uuid4()}/artifacts/{artifact['artifact_id']}",
    ):
        assert_error(http.get(path, headers=CLIENT_HEADERS), 404, "not found")


# --- limits --------------------------------------------------------------------------------------


def test_object_limit_answers_507_and_keeps_state(serve: Serve) -> None:
    with (
        serve(protocols=("agent-protocol",), limits=MockLimits(max_stored_objects=3)) as server,
        httpx.Client(base_url=server.url) as http,
    ):
        task_id = new_task(http, {"input": None})["task_id"]  # a 2-step plan
        assert http.post(f"{TASKS}/{task_id}/steps").status_code == 200
        assert upload(http, task_id, ('name="file"; filename="a"', b"a")).status_code == 200
        assert_error(http.post(TASKS, json={}), 507)
        assert_error(http.post(f"{TASKS}/{task_id}/steps"), 507)
        assert_error(upload(http, task_id, ('name="file"; filename="b"', b"b")), 507)
        assert http.get(TASKS).json()["pagination"]["total_items"] == 1
        task = http.get(f"{TASKS}/{task_id}").json()
        assert len(task["artifacts"]) == 1
        assert http.get(f"{TASKS}/{task_id}/steps").json()["pagination"]["total_items"] == 1


def test_byte_limits(serve: Serve) -> None:
    limits = MockLimits(max_stored_bytes=12, max_upload_bytes=64)
    with serve(protocols=("agent-protocol",), limits=limits) as server, httpx.Client(base_url=server.url) as http:
        task_id = new_task(http, {"input": "a b c"})["task_id"]  # a 2-step plan; output.txt takes 13 bytes
        assert_error(upload(http, task_id, ('name="file"; filename="big"', b"x" * 65)), 413)
        assert upload(http, task_id, ('name="file"; filename="a"', b"x" * 10)).status_code == 200
        assert_error(upload(http, task_id, ('name="file"; filename="b"', b"x" * 3)), 507, "12 bytes")
        assert http.post(f"{TASKS}/{task_id}/steps").status_code == 200
        assert_error(http.post(f"{TASKS}/{task_id}/steps"), 507)
        assert http.get(f"{TASKS}/{task_id}/steps").json()["pagination"]["total_items"] == 1
        assert len(http.get(f"{TASKS}/{task_id}").json()["artifacts"]) == 1


# --- the document --------------------------------------------------------------------------------


def test_every_operation_answers_as_documented(http: httpx.Client) -> None:
    task = http.post(TASKS, json={"input": "one", "additional_input": {"k": 1}})
    task_id = task.json()["task_id"]
    step = http.post(f"{TASKS}/{task_id}/steps", json={"input": "x"})
    steps = run_to_end(http, task_id)
    uploaded = upload(http, task_id, ('name="relative_path"', b"a/b"), ('name="file"; filename="f.bin"', b"\x00\xff"))
    artifact_id = uploaded.json()["artifact_id"]
    missing = str(uuid.uuid4())
    base = f"{TASKS}/{task_id}"
    exchanges = [
        task,
        http.post(TASKS, content=b"[]", headers=CLIENT_HEADERS),
        http.get(TASKS, params={"page_size": 2}),
        http.get(base),
        http.get(f"{TASKS}/{missing}"),
        http.get(f"{base}/steps"),
        http.get(f"{TASKS}/{missing}/steps"),
        step,
        http.post(f"{TASKS}/{missing}/steps", json={}),
        http.post(f"{base}/steps", content=b"[]", headers=CLIENT_HEADERS),
        http.post(f"{base}/steps", json={}),
        http.get(f"{base}/steps/{steps[-1]['step_id']}"),
        http.get(f"{base}/steps/{missing}"),
        http.get(f"{base}/artifacts"),
        http.get(f"{TASKS}/{missing}/artifacts"),
        uploaded,
        upload(http, missing, ('name="file"; filename="f"', b"x")),
        http.get(f"{base}/artifacts/{artifact_id}"),
        http.get(f"{base}/artifacts/{missing}"),
    ]
    spec = load("agent-protocol")
    statuses: dict[str, set[int]] = {}
    for exchange in exchanges:
        # a 422 answers a body sent malformed on purpose: only the answer is checked then
        operation = validate_exchange(spec, exchange, check_request=exchange.status_code != 422)
        statuses.setdefault(operation, set()).add(exchange.status_code)
    documented = {
        op.operation_id: {int(s) for s in op.definition["responses"] if s != "default"} for op in spec.operations()
    }
    assert statuses == documented
