"""The preflight tells a server of the protocol from a server of another one, from answers only
that protocol gives: every pair (protocol, a live server of another protocol) is exit 2 with the
hint, each protocol's own server passes, and a target that answers everything alike is no one's."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from aiohttp import web

from conformance.check.http import Limits
from conformance.engine.runner import run
from conformance.phases.preflight import HINT, preflight
from conformance.run.options import RunOptions
from conformance.run.suites import suite
from conformance.verdicts.results import Status
from mockserver import MockConfig
from mockserver.embedded import EmbeddedServer
from specs.documents import PROTOCOLS, load
from specs.serving import AppServer

PIDS = sorted(PROTOCOLS)


@pytest.fixture(scope="module")
def only() -> Iterator[dict[str, str]]:
    """For each protocol, the root URL of a mock serving that protocol alone."""
    servers = {pid: EmbeddedServer(MockConfig(protocols=(pid,))).start() for pid in PIDS}
    try:
        yield {pid: server.url for pid, server in servers.items()}
    finally:
        for server in servers.values():
            server.stop()


def check(pid: str, url: str) -> str | None:
    spec = load(pid)
    options = RunOptions(protocol=pid, base_url=url + spec.info.base_path, token="alice-token", timeout=5)
    return preflight(options, Limits(timeout=5), spec, options.token, suite(pid).signatures)


@pytest.mark.parametrize(("pid", "served"), [(p, s) for p in PIDS for s in PIDS if p != s])
def test_a_server_of_another_protocol_is_exit_2_with_the_hint(pid: str, served: str, only: dict[str, str]) -> None:
    spec = load(pid)
    result = run(RunOptions(protocol=pid, base_url=only[served] + spec.info.base_path, token="t", timeout=5))
    assert result.exit_code == 2 and result.fatal is not None and HINT in result.fatal, result.fatal
    assert all(r.status is Status.NOT_VERIFIED for r in result.results)  # nothing ran, nothing passed


@pytest.mark.parametrize("pid", PIDS)
def test_a_server_of_the_protocol_is_recognised(pid: str, only: dict[str, str]) -> None:
    assert suite(pid).signatures, "each protocol of the kit says how its servers are recognised"
    assert check(pid, only[pid]) is None


class Alike(AppServer):
    """Answers every request with the same status and JSON body."""

    name = "uniform server"

    def __init__(self, status: int, body: str) -> None:
        super().__init__()
        self.status, self.body = status, body

    def make_app(self) -> web.Application:
        async def answer(request: web.Request) -> web.Response:
            return web.Response(status=self.status, text=self.body, content_type="application/json")

        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", answer)
        return app


@pytest.mark.parametrize(
    ("status", "body"),
    [(200, '{"ok": true}'), (401, '{"error": "unauthorized"}'), (404, '{"message": "Not Found", "code": "x"}')],
)
def test_a_target_answering_everything_alike_is_no_protocols(status: int, body: str) -> None:
    with Alike(status, body) as server:
        for pid in PIDS:
            problem = check(pid, server.url)
            assert problem is not None and HINT in problem and f"-> {status}" in problem, (pid, problem)


def test_an_answer_that_is_no_answer_leaves_the_question_open() -> None:
    """A 5xx, a busy server or a broken JSON body may come from a server of the protocol: the
    requirements judge it, the preflight does not call it another protocol's."""
    for status, body in ((503, '{"detail": "down"}'), (429, "{}"), (200, '{"tasks": ')):
        with Alike(status, body) as server:
            assert check("agent-protocol", server.url) is None, (status, body)


def test_a_neuro_san_server_without_the_concierge_list_is_recognised() -> None:
    """The published document has no parameterless operation and no list: its well-known agent or
    the documented Status of an agent it does not host tell a NeuroSan server all the same."""
    with EmbeddedServer(MockConfig(protocols=("neuro-san",), faults=("ns-no-concierge-list",))) as server:
        assert check("neuro-san", server.url) is None
