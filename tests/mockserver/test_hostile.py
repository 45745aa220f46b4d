"""How the mock takes hostile bodies (mockserver/hostile.py): refused by default; each hostile
fault acts as a real server does, and the control replaces a lone surrogate by U+FFFD."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager

import httpx
import pytest

from mockserver.embedded import EmbeddedServer
from mockserver.hostile import Hostile, Surrogates, holds_surrogate, replaced
from mockserver.jsonio import fragment
from mockserver.validation import JsonBodyError, parse_json

Serve = Callable[..., AbstractContextManager[EmbeddedServer]]
TASKS = "/ap/v1/agent/tasks"
JSON = {"Content-Type": "application/json"}
LONE = b'{"input": "a\\ud800b"}'


def test_a_lone_surrogate_is_refused_kept_or_replaced_as_asked() -> None:
    with pytest.raises(JsonBodyError, match="unpaired"):
        parse_json(LONE)
    assert parse_json(LONE, surrogates=Surrogates.KEPT) == {"input": "a\ud800b"}
    assert parse_json(LONE, surrogates=Surrogates.REPLACED) == {"input": "a\ufffdb"}
    # a pair's escapes are one astral character, accepted in every mode
    assert parse_json(b'{"input": "\\ud83d\\ude80"}') == {"input": "\U0001f680"}


def test_holds_surrogate_sees_lone_ones_only_pre_encoded_or_not() -> None:
    assert holds_surrogate({"a": "x\ud800"}) and holds_surrogate([fragment({"a": "\udfff"})])
    assert holds_surrogate({"a": "\udc00\ud800"})  # a pair reversed is two lone ones
    assert not holds_surrogate({"a": "\U0001f680", "big": 2**70})  # json.dumps escapes astral as a pair
    assert replaced({"\ud800k": ["\udfff"]}) == {"\ufffdk": ["\ufffd"]}


def test_the_hostile_faults_act_on_their_operation_only() -> None:
    from mockserver import resolve

    faults = resolve(["ap-step-null-body-runs", "ap-lone-surrogate-breaks-lists"])
    assert faults.hostile("executeAgentTaskStep").falsy_as == {}
    assert faults.hostile("createAgentTask") == Hostile(surrogates=Surrogates.KEPT)
    assert faults.hostile("listAgentTasks") == Hostile()
    assert faults.keeps_surrogates("agent-protocol") and not faults.keeps_surrogates("sgr-agent-core")


def test_the_mock_refuses_null_and_surrogates(serve: Serve) -> None:
    with serve(protocols=("agent-protocol",)) as server, httpx.Client(base_url=server.url) as http:
        task = http.post(TASKS, json={"input": "x"}).json()["task_id"]
        for body in (b"null", b"[]", b'"x"', b"1"):
            assert http.post(f"{TASKS}/{task}/steps", content=body, headers=JSON).status_code == 422
        assert http.post(TASKS, content=LONE, headers=JSON).status_code == 422
        assert http.get(f"{TASKS}/{task}/steps").json()["steps"] == []


def test_a_null_step_body_runs_a_step_under_its_fault(serve: Serve) -> None:
    with (
        serve(protocols=("agent-protocol",), faults=("ap-step-null-body-runs",)) as server,
        httpx.Client(base_url=server.url) as http,
    ):
        task = http.post(TASKS, json={"input": "x"}).json()["task_id"]
        assert http.post(f"{TASKS}/{task}/steps", content=b"null", headers=JSON).status_code == 200
        assert http.post(f"{TASKS}/{task}/steps", content=b'"x"', headers=JSON).status_code == 422
        assert len(http.get(f"{TASKS}/{task}/steps").json()["steps"]) == 1


def test_a_kept_surrogate_breaks_every_list_that_shows_it_and_the_control_does_not(serve: Serve) -> None:
    with (
        serve(protocols=("agent-protocol",), faults=("ap-lone-surrogate-breaks-lists",)) as server,
        httpx.Client(base_url=server.url) as http,
    ):
        assert http.get(TASKS).status_code == 200
        assert http.post(TASKS, content=LONE, headers=JSON).status_code == 500
        assert http.get(TASKS).status_code == 500
    with (
        serve(protocols=("agent-protocol",), faults=("ap-lone-surrogate-replaced",)) as server,
        httpx.Client(base_url=server.url) as http,
    ):
        assert http.post(TASKS, content=LONE, headers=JSON).json()["input"] == "a\ufffdb"
        assert http.get(TASKS).status_code == 200


BOUNDARY = "b0undary"
NOT_UTF8 = "a\ud800b".encode("utf-8", "surrogatepass")
"""A lone surrogate as a lenient encoder writes it into a multipart file name: no UTF-8."""


def _upload(http: httpx.Client, task: str, file_name: bytes, relative_path: bytes | None = None) -> httpx.Response:
    """A multipart upload built by hand: no encoder writes a file name that is not UTF-8."""
    parts = b""
    if relative_path is not None:
        parts += f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="relative_path"\r\n\r\n'.encode()
        parts += relative_path + b"\r\n"
    parts += f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="'.encode() + file_name
    parts += f'"\r\nContent-Type: application/octet-stream\r\n\r\nbytes\r\n--{BOUNDARY}--\r\n'.encode()
    headers = {"Content-Type": f"multipart/form-data; boundary={BOUNDARY}"}
    return http.post(f"{TASKS}/{task}/artifacts", content=parts, headers=headers)


@pytest.mark.parametrize(
    ("faults", "upload", "listed", "download", "folder"),
    [
        ((), 422, 200, None, 422),  # refused, in the protocol's error shape
        (("ap-file-name-surrogate-breaks-lists",), 500, 500, None, 500),  # kept: every answer holding it fails
        (("ap-file-name-not-utf8-kept",), 200, 200, 500, 422),  # answered as escapes; its download cannot be written
        (("ap-file-name-not-utf8-replaced",), 200, 200, 200, 200),  # the control: U+FFFD in its place
    ],
)
def test_a_file_name_that_is_not_utf8_is_refused_kept_or_replaced_as_asked(
    serve: Serve, faults: tuple[str, ...], upload: int, listed: int, download: int | None, folder: int
) -> None:
    with serve(protocols=("agent-protocol",), faults=faults) as server, httpx.Client(base_url=server.url) as http:
        task = http.post(TASKS, json={"input": "x"}).json()["task_id"]
        answer = _upload(http, task, NOT_UTF8)
        assert answer.status_code == upload, answer.text
        if upload == 422:
            assert set(answer.json()) == {"message"}
        assert http.get(f"{TASKS}/{task}/artifacts").status_code == listed
        if download is not None:
            artifact = answer.json()["artifact_id"]
            assert http.get(f"{TASKS}/{task}/artifacts/{artifact}").status_code == download
        if faults == ("ap-file-name-not-utf8-replaced",):
            assert answer.json()["file_name"] == "a\ufffd\ufffd\ufffdb"
        # a relative_path that is not UTF-8: refused, kept or replaced as a file name is (the fault
        # that answers escapes keeps file names only)
        assert _upload(http, task, b"fine.txt", NOT_UTF8).status_code == folder
