"""Security of the mock: artifact names, Synapse isolation, tokens, and error bodies under attack.

- Artifact ``file_name`` and ``relative_path`` are labels: they reach no filesystem, cannot reach
  another task's artifact, and cannot break or add a response header (Content-Disposition).
- Synapse: on every route, lists and history included, one user never sees or touches another
  user's sessions, jobs, history or trace; page tokens do not cross users.
- Bearer tokens are compared in constant time against every configured token, and never appear
  in log output or in error bodies.
- Hostile bodies (malformed JSON, huge numbers, 10,000-deep nesting, invalid UTF-8, NUL bytes,
  lone surrogates, NaN) on every JSON operation of every protocol get the protocol's
  invalid-body status in its error shape, naming no exception, path or traceback, and the server
  keeps serving.
"""

from __future__ import annotations

import ast
import asyncio
import inspect
import json
import logging
import os
import re
import textwrap
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import aiohttp
import httpx
import pytest

import mockserver.api
from mockserver import EmbeddedServer, MockConfig
from mockserver.api import ProtocolApi
from mockserver.faults import FaultSet
from mockserver.protocols.synapse_agent.models import answer_for
from mockserver.protocols.synapse_agent.store import NOT_OWNER
from mockserver.streaming import StreamGate
from mockserver.validation import OperationValidator
from scripts.fuzz_mock import leak_problem, shape_problem
from specs.documents import PROTOCOLS, load
from tests.mockserver.test_limits import serving
from tests.timing import Clock

Serve = Callable[..., AbstractContextManager[EmbeddedServer]]
REPO = Path(__file__).resolve().parents[2]
AP = "/ap/v1/agent/tasks"
SYN = "/repo/v1"


def assert_error(response: httpx.Response, protocol: str, status: int | None = None, sent: str = "") -> Any:
    """The protocol's error shape, nothing internal (``sent``: what the request carried, which
    an answer may echo)."""
    if status is not None:
        assert response.status_code == status, response.text[:300]
    assert 400 <= response.status_code < 500, response.text[:300]
    problem = shape_problem(protocol, response.status_code, response.headers.get("content-type", ""), response.content)
    assert problem is None, problem
    assert leak_problem(response.content, sent) is None, response.text[:300]
    for python in (
        "sys.set_int_max_str_digits",
        "Exceeds the limit (4300",
        "codec can't",
        "surrogates not allowed",
        "maximum recursion depth",
        "object at 0x",
        "<class ",
    ):
        if python not in sent:
            assert python not in response.text, f"{python!r} in {response.text[:300]!r}"
    return response.json()


# -- artifact names ----------------------------------------------------------------------------------

BOUNDARY = "----mockserver-security-test"


def form(disposition: str, data: bytes, relative_path: str | None = None) -> tuple[bytes, dict[str, str]]:
    """A multipart body with the file part's Content-Disposition parameters written by hand."""
    parts = [
        f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="file"; {disposition}\r\n'
        f"Content-Type: application/octet-stream\r\n\r\n".encode()
        + data
        + b"\r\n"
    ]
    if relative_path is not None:
        parts.append(
            f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="relative_path"\r\n\r\n'.encode()
            + relative_path.encode()
            + b"\r\n"
        )
    return b"".join(parts) + f"--{BOUNDARY}--\r\n".encode(), {
        "Content-Type": f"multipart/form-data; boundary={BOUNDARY}"
    }


# (Content-Disposition parameters as sent, the file name the server must record)
NAMES = [
    ('filename="../../etc/passwd"', "../../etc/passwd"),
    ('filename=".."', ".."),
    ('filename="."', "."),
    ('filename="a\\"b.txt"', 'a"b.txt'),
    ("filename*=UTF-8''a%0D%0AX-Injected%3A%201", "a\r\nX-Injected: 1"),
    ("filename*=UTF-8''x%0D%0A%0D%0A%3Chtml%3E", "x\r\n\r\n<html>"),
    ("filename*=UTF-8''%22%3B%20filename%3D%22evil.sh", '"; filename="evil.sh'),
    ('filename="semi;colon=x.txt"', "semi;colon=x.txt"),
    ("filename*=UTF-8''%E5%90%8D%E5%89%8D.txt", "名前.txt"),
    ('filename="tab\tname"', "tab\tname"),
    ("filename*=UTF-8''nul%00byte", "nul\x00byte"),
    ('filename="C:\\\\Windows\\\\system.ini"', "C:\\Windows\\system.ini"),
    ("filename*=UTF-8''..%2F..%2F..%2Ftmp%2Fpwned", "../../../tmp/pwned"),
]
RELATIVE_PATHS = ["../../..", "/etc", "..\\..\\x", "a/../../b", "x\r\nSet-Cookie: a=b", ""]


def disposition_filename(header: str) -> str:
    found = re.search(r'(?:^|;\s*)filename="([^"]*)"', header)
    assert found, header
    return found.group(1)


@pytest.fixture(scope="module")
def ap() -> Iterator[httpx.Client]:
    with (
        EmbeddedServer(MockConfig(protocols=("agent-protocol",))) as server,
        httpx.Client(base_url=server.url, timeout=10) as http,
    ):
        yield http


def new_task(http: httpx.Client, text: str = "one two") -> str:
    r = http.post(AP, json={"input": text})
    assert r.status_code == 200, r.text
    return str(r.json()["task_id"])


@pytest.mark.parametrize(("disposition", "name"), NAMES, ids=[n for _, n in NAMES])
@pytest.mark.parametrize("relative_path", RELATIVE_PATHS)
def test_artifact_names_are_labels_that_cannot_inject_headers(
    ap: httpx.Client, disposition: str, name: str, relative_path: str
) -> None:
    task = new_task(ap)
    data = os.urandom(64)
    body, headers = form(disposition, data, relative_path)
    r = ap.post(f"{AP}/{task}/artifacts", content=body, headers=headers)
    assert r.status_code == 200, r.text
    artifact = r.json()
    assert artifact["file_name"] == name and artifact["relative_path"] == relative_path  # stored verbatim
    download = ap.get(f"{AP}/{task}/artifacts/{artifact['artifact_id']}")
    assert download.status_code == 200 and download.content == data
    # exactly one Content-Disposition, on one line, and nothing the name tried to add
    raw_headers = download.headers.raw
    assert [k.lower() for k, _ in raw_headers].count(b"content-disposition") == 1
    assert not {k.lower() for k, _ in raw_headers} & {b"x-injected", b"set-cookie"}
    header = download.headers["content-disposition"]
    assert not re.search(r"[\x00-\x1f\x7f]", header), repr(header)
    assert header.startswith("attachment; ")
    plain = disposition_filename(header)  # a quoted string with no quote inside: quotes were escaped
    assert plain not in ("", ".", "..") and not re.search(r'[/\\"\x00-\x1f]', plain), plain
    extended = re.search(r"filename\*=UTF-8''([^;\s]*)", header)
    if extended:
        assert not re.search(r"[\x00-\x20\"';\\]", extended.group(1)), extended.group(1)
    served = unquote(extended.group(1)) if extended else plain
    assert served not in ("", ".", "..") and not re.search(r"[/\\\x00-\x1f\x7f]", served), served
    if not re.search(r"[/\\\x00-\x1f\x7f]", name) and name.strip("."):
        assert served == name  # a name that already is one safe path segment is served unchanged


def test_content_disposition_filename_star_names_no_path(ap: httpx.Client) -> None:
    task = new_task(ap)
    for disposition, _ in NAMES:
        body, headers = form(disposition, b"x")
        artifact = ap.post(f"{AP}/{task}/artifacts", content=body, headers=headers).json()
        header = ap.get(f"{AP}/{task}/artifacts/{artifact['artifact_id']}").headers["content-disposition"]
        extended = re.search(r"filename\*=UTF-8''([^;\s]*)", header)
        if extended:
            value = unquote(extended.group(1))
            assert value not in (".", "..") and not re.search(r"[/\\\x00]", value), header


def test_a_long_file_name_leaves_the_artifact_downloadable(ap: httpx.Client) -> None:
    task = new_task(ap)
    artifact = ap.post(f"{AP}/{task}/artifacts", files={"file": ("é" * 5000, b"payload")}).json()

    async def download() -> bytes:
        async with (
            aiohttp.ClientSession(str(ap.base_url)) as http,
            http.get(f"{AP}/{task}/artifacts/{artifact['artifact_id']}") as r,
        ):
            assert r.status == 200
            return await r.read()

    assert asyncio.run(asyncio.wait_for(download(), 10)) == b"payload"


def test_relative_path_cannot_reach_another_tasks_artifact_or_the_disk(ap: httpx.Client) -> None:
    victim = new_task(ap, "secret words here")
    steps = [ap.post(f"{AP}/{victim}/steps", json={}).json() for _ in range(4)]
    assert any(s["is_last"] for s in steps)
    output = next(a for s in steps for a in s["artifacts"])
    original = ap.get(f"{AP}/{victim}/artifacts/{output['artifact_id']}").content
    listed_before = ap.get(f"{AP}/{victim}/artifacts").json()
    attacker = new_task(ap)
    marker = f"pwned-{uuid.uuid4().hex}"
    for relative_path, file_name in (
        (f"../{victim}", "output.txt"),
        (f"../../{victim}/.", "output.txt"),
        ("../../../../../../tmp", f"{marker}.txt"),
        ("", f"../{victim}/output.txt"),
        (str(REPO), f"{marker}.txt"),
    ):
        body, headers = form(f'filename="{file_name}"', b"overwritten!", relative_path)
        assert ap.post(f"{AP}/{attacker}/artifacts", content=body, headers=headers).status_code == 200
    assert ap.get(f"{AP}/{victim}/artifacts/{output['artifact_id']}").content == original
    assert ap.get(f"{AP}/{victim}/artifacts").json() == listed_before
    assert ap.get(f"{AP}/{attacker}/artifacts").json()["pagination"]["total_items"] == 5
    assert not Path(f"/tmp/{marker}.txt").exists() and not (REPO / f"{marker}.txt").exists()
    # an artifact id of another task does not open it through this task
    assert_error(ap.get(f"{AP}/{attacker}/artifacts/{output['artifact_id']}"), "agent-protocol", 404)


# -- Synapse isolation ------------------------------------------------------------------------------

USERS = {"alice": "alice-token", "bob": "bob-token", "carol": "carol-token"}


def auth(user: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {USERS[user]}"}


def session_routes(session: str, job: str) -> dict[str, tuple[str, str, Any]]:
    """By operationId: every route that names a session or a job."""
    return {
        "getAgentSession": ("GET", f"{SYN}/agent/session/{session}", None),
        "updateAgentSession": (
            "PUT",
            f"{SYN}/agent/session/{session}",
            {"sessionId": session, "agentAccessLevel": "WRITE_YOUR_PRIVATE_DATA"},
        ),
        "getSessionHistory": ("POST", f"{SYN}/agent/session/history/{session}", {}),
        "startAgentChat": ("POST", f"{SYN}/agent/chat/async/start", {"sessionId": session, "chatText": "mine now"}),
        "getAgentChatResult": ("GET", f"{SYN}/agent/chat/async/get/{job}", None),
        "getTraceEvents": ("POST", f"{SYN}/agent/chat/trace/{job}", {}),
    }


SCOPED_ROUTES = {"createAgentSession", "listAgentSessions", "getMyOwnUserProfile"}
"""The routes that name no session or job: they answer about the caller only."""


def test_the_isolation_tables_cover_every_synapse_operation() -> None:
    ids = {op.operation_id for op in load("synapse-agent").operations()}
    assert set(session_routes("1", "2")) | SCOPED_ROUTES == ids


def list_all(http: httpx.Client, user: str, token: str | None = None) -> list[dict[str, Any]]:
    sessions: list[dict[str, Any]] = []
    for _ in range(100):
        r = http.post(f"{SYN}/agent/sessions/list", json={"nextPageToken": token} if token else {}, headers=auth(user))
        assert r.status_code == 200, r.text
        sessions += r.json()["page"]
        token = r.json().get("nextPageToken")
        if token is None:
            return sessions
    raise AssertionError("endless list")


def test_synapse_users_are_isolated_on_every_route() -> None:
    config = MockConfig(protocols=("synapse-agent",), tokens=dict(USERS), job_seconds=0.05)
    with EmbeddedServer(config) as server, httpx.Client(base_url=server.url, timeout=10) as http:
        owned: dict[str, list[tuple[str, str, str]]] = {u: [] for u in USERS}  # (session, job, text)
        for n in range(13):  # interleaved, and more than a page (10) each
            for user in USERS:
                r = http.post(
                    f"{SYN}/agent/session", json={"agentAccessLevel": "READ_YOUR_PRIVATE_DATA"}, headers=auth(user)
                )
                session = r.json()["sessionId"]
                text = f"{user}'s secret {n} {uuid.uuid4()}"
                r = http.post(
                    f"{SYN}/agent/chat/async/start",
                    headers=auth(user),
                    json={"sessionId": session, "chatText": text, "enableTrace": True},
                )
                owned[user].append((session, r.json()["token"], text))
        time.sleep(0.1)  # every job is done
        secrets = {user: [text for _, _, text in items] for user, items in owned.items()}
        for owner, items in owned.items():
            for session, job, text in items[:3]:
                snapshot = http.get(f"{SYN}/agent/session/{session}", headers=auth(owner)).json()
                for other in USERS:
                    if other == owner:
                        continue
                    for operation, (method, path, body) in session_routes(session, job).items():
                        r = http.request(method, path, json=body, headers=auth(other))
                        error = assert_error(r, "synapse-agent", 403, sent=json.dumps(body))
                        assert error["reason"] == NOT_OWNER, operation
                        assert text not in r.text and snapshot["etag"] not in r.text, operation
                # nothing changed for the owner, and the owner still has everything
                assert http.get(f"{SYN}/agent/session/{session}", headers=auth(owner)).json() == snapshot
                result = http.get(f"{SYN}/agent/chat/async/get/{job}", headers=auth(owner)).json()
                assert result["responseText"] == answer_for(text) and result["sessionId"] == session
                page = http.post(f"{SYN}/agent/session/history/{session}", json={}, headers=auth(owner)).json()
                assert [i["requestText"] for i in page["page"]] == [text]
                trace = http.post(f"{SYN}/agent/chat/trace/{job}", json={}, headers=auth(owner)).json()
                assert trace["page"] and all(
                    not any(s in e["message"] for u, ss in secrets.items() if u != owner for s in ss)
                    for e in trace["page"]
                )
        # lists: each user's pages hold exactly that user's sessions
        first_pages: dict[str, str] = {}
        for user, items in owned.items():
            sessions = list_all(http, user)
            assert sorted(s["sessionId"] for s in sessions) == sorted(s for s, _, _ in items)
            profile = http.get(f"{SYN}/userProfile", headers=auth(user)).json()
            assert {s["startedBy"] for s in sessions} == {int(profile["ownerId"])}
            assert profile["userName"] == user
            r = http.post(f"{SYN}/agent/sessions/list", json={}, headers=auth(user))
            first_pages[user] = r.json()["nextPageToken"]
        # a page token handed to alice shows bob nothing of alice's
        for user, token in first_pages.items():
            for other in USERS:
                if other != user:
                    seen = {s["sessionId"] for s in list_all(http, other, token)}
                    assert not seen & {s for s, _, _ in owned[user]}, (user, other)


def test_isolation_test_catches_a_server_without_it(serve: Serve) -> None:
    """The same probe against the fault that drops the owner check: it must see the breach."""
    with (
        serve(protocols=("synapse-agent",), faults=("syn-cross-user-access",)) as server,
        httpx.Client(base_url=server.url, timeout=10) as http,
    ):
        session = http.post(
            f"{SYN}/agent/session", json={"agentAccessLevel": "PUBLICLY_ACCESSIBLE"}, headers=auth("alice")
        ).json()["sessionId"]
        assert http.get(f"{SYN}/agent/session/{session}", headers=auth("bob")).status_code == 200


# -- tokens --------------------------------------------------------------------------------------


def test_tokens_are_compared_in_constant_time_against_every_token() -> None:
    """Code-level: ``identify`` (which ``authenticate`` asks) compares with ``hmac.compare_digest``
    only, over every configured token, with no early exit and no ``==``/``in``/lookup on the
    presented token."""
    assert "self.identify(request)" in inspect.getsource(ProtocolApi.authenticate)
    source = textwrap.dedent(inspect.getsource(ProtocolApi.identify))
    tree = ast.parse(source)
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call)]
    digests = [c for c in calls if ast.unparse(c.func) == "hmac.compare_digest"]
    assert len(digests) == 1, source
    loops = [n for n in ast.walk(tree) if isinstance(n, ast.For)]
    assert len(loops) == 1 and ast.unparse(loops[0].iter) == "self._tokens", source
    assert any(d is c for c in ast.walk(loops[0]) for d in digests), "compare_digest is not in the loop"
    assert not [n for n in ast.walk(loops[0]) if isinstance(n, ast.Break | ast.Return | ast.Raise)], (
        "the loop stops early: the time taken reveals which token matched"
    )
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            text = ast.unparse(node)
            assert "token" not in text and "presented" not in text and "expected" not in text, text
        if isinstance(node, ast.Subscript):
            assert "presented" not in ast.unparse(node.slice) and "token" not in ast.unparse(node.slice)
    assert "compare_digest" in inspect.getsource(mockserver.api)
    # every configured token is in the list the loop walks
    api = ProtocolApi(load("synapse-agent"), MockConfig(tokens=dict(USERS)), FaultSet(), StreamGate(1))
    assert [user for user, _ in api._tokens] == list(USERS)


@pytest.mark.parametrize("presented", ["alice-token", "carol-token", "nobody-token", "alice-toke", "x"])
def test_every_token_is_compared_whatever_is_presented(presented: str, monkeypatch: pytest.MonkeyPatch) -> None:
    import hmac

    compared: list[tuple[bytes, bytes]] = []
    real = hmac.compare_digest

    def spy(a: Any, b: Any) -> bool:
        compared.append((a, b))
        return real(a, b)

    async def test() -> None:
        async with (
            serving(protocols=("synapse-agent",), tokens=dict(USERS)) as (url, _),
            aiohttp.ClientSession(url) as http,
        ):
            monkeypatch.setattr(hmac, "compare_digest", spy)
            async with http.get(f"{SYN}/userProfile", headers={"Authorization": f"Bearer {presented}"}) as r:
                assert r.status == (200 if presented in USERS.values() else 401)
            monkeypatch.undo()

    asyncio.run(asyncio.wait_for(test(), 20))
    assert sorted(b for _, b in compared) == sorted(t.encode() for t in USERS.values())


def test_tokens_never_appear_in_logs_or_error_bodies(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    wrong = f"wrong-{uuid.uuid4().hex}"
    tokens = [*USERS.values(), wrong]
    caplog.set_level(logging.DEBUG)
    for name in ("aiohttp.server", "aiohttp.access", "aiohttp.web", "mockserver"):
        caplog.set_level(logging.DEBUG, logger=name)
    bodies: list[str] = []

    async def test() -> None:
        async with (
            serving(protocols=("synapse-agent",), tokens=dict(USERS), job_seconds=0.01) as (url, _),
            aiohttp.ClientSession(url) as http,
        ):
            for token in tokens:
                for scheme in ("Bearer", "bearer", "Basic", "Token"):
                    headers = {"Authorization": f"{scheme} {token}"}
                    for method, path, body in (
                        ("POST", f"{SYN}/agent/sessions/list", {}),
                        ("GET", f"{SYN}/agent/session/1", None),
                        ("POST", f"{SYN}/agent/session", {"agentAccessLevel": "NOPE"}),
                        ("GET", f"{SYN}/nowhere", None),
                    ):
                        async with http.request(method, path, json=body, headers=headers) as r:
                            bodies.append(await r.text())
            # a crash with a valid token is logged with its traceback: still no token in it
            original = OperationValidator.parameters

            def explode(self: OperationValidator, request: Any) -> Any:
                raise RuntimeError("boom")

            monkeypatch.setattr(OperationValidator, "parameters", explode)
            async with http.get(f"{SYN}/userProfile", headers=auth("alice")) as r:
                assert r.status == 500
                bodies.append(await r.text())
            monkeypatch.setattr(OperationValidator, "parameters", original)
            # and a request aiohttp's parser rejects, carrying a token
            host, port = url.removeprefix("http://").split(":")
            reader, writer = await asyncio.open_connection(host, int(port))
            writer.write(
                f"GET {SYN}/userProfile HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {wrong}\r\n"
                f"Bad\x00Header: 1\r\n\r\n".encode()
            )
            bodies.append((await asyncio.wait_for(reader.read(), 5)).decode("latin-1"))
            writer.close()

    asyncio.run(asyncio.wait_for(test(), 30))
    assert "unhandled error" in caplog.text  # logging was captured
    for token in tokens:
        assert token not in caplog.text, f"{token} logged"
        for body in bodies:
            assert token not in body, f"{token} in an answer: {body[:200]}"


# -- hostile bodies ---------------------------------------------------------------------------------

HOSTILE: dict[str, tuple[bytes, bool]] = {
    # name: (body, must be refused with the protocol's invalid-body status)
    "malformed": (b'{"broken": ', True),
    "trailing-garbage": (b'{"a": 1} x', True),
    "huge-integer": (b'{"a": 1' + b"0" * 5000 + b"}", True),
    "huge-negative-integer": (b'{"a": -' + b"9" * 100_000 + b"}", True),
    "overflowing-float": (b'{"a": 1e999999}', True),
    "negative-overflow": (b'{"a": -1.5e400}', True),
    "nan": (b'{"a": NaN}', True),
    "infinity": (b'{"a": -Infinity}', True),
    "deep-arrays": (b"[" * 10_000 + b"]" * 10_000, True),
    "deep-objects": (b'{"a":' * 10_000 + b"1" + b"}" * 10_000, True),
    "deep-unclosed": (b"[" * 100_000, True),
    "deep-inside": (b'{"a": ' + b"[" * 500 + b"]" * 500 + b"}", True),
    "invalid-utf8": (b'{"a": "\xff\xfe"}', True),
    "overlong-utf8": (b'{"a": "\xc0\xaf"}', True),
    "utf8-surrogate": (b'{"a": "\xed\xa0\x80"}', True),
    "truncated-utf8": (b'{"a": "\xe2\x82"}', True),
    "utf16": ('{"a": "b"}'.encode("utf-16"), True),
    "nul-in-string": (b'{"a": "x\x00y"}', True),
    "nul-after": (b'{"a": 1}\x00', True),
    "nul-only": (b"\x00" * 100, True),
    "lone-surrogate": (b'{"a": "\\ud800"}', True),
    "lone-low-surrogate-key": (b'{"\\udc00": 1}', True),
    "escaped-nul": (b'{"a": "x\\u0000y"}', False),
    "paired-surrogates": (b'{"a": "\\ud83d\\ude00"}', False),
    "big-but-parsable-integer": (b'{"a": 1' + b"0" * 4000 + b"}", False),
    "null": (b"null", False),
    "string": (b'"text"', False),
    "bom": (b'\xef\xbb\xbf{"a": 1}', False),
}


def json_operations() -> list[tuple[str, str, str, str]]:
    """(protocol, operationId, method, path) of every operation that takes a JSON body."""
    found = []
    for protocol in sorted(PROTOCOLS):
        spec = load(protocol)
        for op in spec.operations():
            content = (op.definition.get("requestBody") or {}).get("content") or {}
            if "application/json" in content:
                path = re.sub(r"\{[^}]+\}", "x1", op.path)
                found.append((protocol, op.operation_id, op.method.upper(), spec.info.base_path + path))
    return found


def test_every_protocol_has_json_operations() -> None:
    assert {p for p, *_ in json_operations()} == set(PROTOCOLS)


@pytest.fixture(scope="module")
def everything() -> Iterator[httpx.Client]:
    with EmbeddedServer(MockConfig(job_seconds=0.05)) as server, httpx.Client(base_url=server.url, timeout=20) as http:
        yield http


@pytest.mark.parametrize(
    ("protocol", "operation", "method", "path"), json_operations(), ids=[o for _, o, _, _ in json_operations()]
)
def test_hostile_bodies_are_refused_in_shape_without_internals(
    everything: httpx.Client, protocol: str, operation: str, method: str, path: str
) -> None:
    headers = {
        "Content-Type": "application/json",
        **({"Authorization": "Bearer alice-token"} if protocol == "synapse-agent" else {}),
    }
    for name, (body, refuse) in HOSTILE.items():
        clock = Clock()
        r = everything.request(method, path, content=body, headers=headers)
        assert r.status_code < 500, (name, r.text[:300])
        clock.assert_within(5, name)
        if refuse:
            assert r.status_code == PROTOCOLS[protocol].error.invalid_body_status, (name, r.status_code, r.text[:300])
            assert "JSON" in assert_error(r, protocol, sent=body.decode("latin-1")).__repr__(), name
        elif r.status_code >= 400:
            assert_error(r, protocol, sent=body.decode("latin-1"))
    # still serving, on the same connection
    assert everything.get("/health").status_code == 200


def test_deep_nesting_within_the_limit_round_trips(everything: httpx.Client) -> None:
    deep: Any = "bottom"
    for n in range(60):
        deep = [deep] if n % 2 else {"k": deep}
    r = everything.post(AP, json={"input": "deep", "additional_input": {"deep": deep}})
    assert r.status_code == 200, r.text
    assert r.json()["additional_input"] == {"deep": deep}


HOSTILE_URLS = [
    ("agent-protocol", f"{AP}/%00"),
    ("agent-protocol", f"{AP}/%FF%FE/steps"),
    ("agent-protocol", f"{AP}/{'a' * 4000}"),
    ("agent-protocol", f"{AP}?page_size=%00"),
    ("agent-protocol", f"{AP}?page_size={'9' * 5000}"),
    ("agent-protocol", f"{AP}?current_page=-1e999"),
    ("agent-protocol", f"{AP}?page_size=NaN"),
    ("neuro-san", "/api/v1/%00/connectivity"),
    ("neuro-san", "/api/v1/..%2F..%2Fetc%2Fpasswd/function"),
    ("sgr-agent-core", "/agents/%ED%A0%80/state"),
    ("sgr-agent-core", "/agents/..%2F..%2F/state"),
    ("synapse-agent", f"{SYN}/agent/session/%00"),
    ("synapse-agent", f"{SYN}/agent/chat/async/get/{'9' * 5000}"),
]


@pytest.mark.parametrize(("protocol", "url"), HOSTILE_URLS, ids=[u[:40] for _, u in HOSTILE_URLS])
def test_hostile_paths_and_queries_are_4xx_in_shape(everything: httpx.Client, protocol: str, url: str) -> None:
    headers = {"Authorization": "Bearer alice-token"} if protocol == "synapse-agent" else {}
    assert_error(everything.get(url, headers=headers), protocol, sent=unquote(url))
