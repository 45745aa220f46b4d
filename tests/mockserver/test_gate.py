"""The safe-origin gate, tested as a hostile browser would meet it: no CORS grant on any admin route,
no request acted on from another origin, no foreign ``Host`` served anywhere, the admin token on
every admin route, and a real headless Chromium page on another origin that fails to read the
journal or to change anything."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path

import httpx
import pytest
from aiohttp import web

from conformance.check.http import tls_context
from mockserver import EmbeddedServer, MockConfig, create_app
from mockserver.__main__ import choose_admin_token
from mockserver.gate import Gate, GateError, host_name, is_loopback
from specs.serving import AppServer
from tests.chromium import CHROMIUM, MISSING, page_title

Serve = Callable[..., AbstractContextManager[EmbeddedServer]]
EVIL = "https://evil.example"
REPO = Path(__file__).resolve().parents[2]
SAMPLE = {"name": "agent-protocol.json", "protocol": "agent-protocol", "tail": "nothing-here", "stub_id": "s1"}
"""A value for each placeholder of an admin route."""


def admin_routes() -> list[tuple[str, str]]:
    """Every admin route of the app (method, a concrete path), the fallback's included."""
    app = create_app(MockConfig())
    found = set()
    for route in app.router.routes():
        info = route.resource.get_info() if route.resource is not None else {}
        template = info.get("formatter") or info.get("path") or ""
        if not template.startswith("/__mock") or route.method == "HEAD":  # HEAD: aiohttp's twin of each GET
            continue
        path = re.sub(r"\{(\w+)(:[^}]*)?\}", lambda m: SAMPLE[m.group(1)], template)
        method = "GET" if route.method == "*" else route.method
        found.add((method, path))
    return sorted(found)


ADMIN = admin_routes()
PROTOCOL_ROUTES = [
    ("GET", "/ap/v1/agent/tasks"),
    ("GET", "/api/v1/hello_world/function"),
    ("GET", "/health"),
    ("GET", "/repo/v1/userProfile"),
    ("GET", "/ap/v1/agent/nothing"),  # a protocol's fallback (404)
    ("GET", "/api/v1/list"),  # a route outside the document
]


def test_the_route_table_is_what_the_tests_walk() -> None:
    """The walk above finds the admin API (a new route is covered without editing this file)."""
    assert ("GET", "/__mock/journal") in ADMIN and ("PUT", "/__mock/chaos") in ADMIN
    assert ("GET", "/__mock/nothing-here") in ADMIN and len(ADMIN) >= 14


@pytest.fixture(scope="module")
def server() -> Iterator[EmbeddedServer]:
    with EmbeddedServer(MockConfig(journal=50)) as running:
        yield running


@pytest.fixture
def c(server: EmbeddedServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.url, timeout=10, verify=tls_context()) as client:
        yield client


def _no_cors(response: httpx.Response) -> None:
    granted = [h for h in response.headers if h.lower().startswith("access-control-")]
    assert not granted, f"{response.request.method} {response.request.url.path}: {granted}"


@pytest.mark.parametrize(("method", "path"), ADMIN)
def test_no_admin_route_grants_a_foreign_origin(c: httpx.Client, method: str, path: str) -> None:
    simple = c.request(method, path, headers={"Origin": EVIL}, content=b'{"size": 5}')
    _no_cors(simple)
    assert simple.status_code == 403 and "other origins" in simple.json()["error"]
    preflight = c.options(
        path,
        headers={"Origin": EVIL, "Access-Control-Request-Method": method, "Access-Control-Request-Headers": "x-a"},
    )
    _no_cors(preflight)
    assert preflight.status_code == 403


def test_a_protocol_route_still_grants_the_same_origin(c: httpx.Client) -> None:
    """The control: what the admin API refuses, the protocol routes grant (CORS as upstream's)."""
    answer = c.get("/health", headers={"Origin": EVIL})
    assert answer.status_code == 200 and answer.headers["Access-Control-Allow-Origin"] == EVIL


@pytest.mark.parametrize(
    "headers",
    [
        {"Origin": EVIL, "Content-Type": "application/x-www-form-urlencoded"},  # a form post: no preflight
        {"Origin": "http://127.0.0.1:1", "Content-Type": "text/plain"},  # another port is another origin
        {"Sec-Fetch-Site": "cross-site"},  # a no-cors request a browser sends without Origin
        {"Sec-Fetch-Site": "same-site"},
    ],
)
def test_a_request_from_another_origin_changes_nothing(c: httpx.Client, headers: dict[str, str]) -> None:
    before = c.get("/__mock/chaos").json()
    refused = c.post("/__mock/chaos/rules", headers=headers, content=b'{"error": 503}')
    assert refused.status_code == 403
    assert c.put("/__mock/journal", headers=headers, json={"size": 7}).status_code == 403
    assert c.get("/__mock/chaos").json() == before
    assert c.get("/__mock/").json()["journal"]["size"] == 50


def test_the_mocks_own_origin_and_a_typed_address_are_served(c: httpx.Client, server: EmbeddedServer) -> None:
    assert c.get("/__mock/chaos", headers={"Origin": server.url}).status_code == 200
    assert c.get("/__mock/chaos", headers={"Sec-Fetch-Site": "none"}).status_code == 200
    assert c.get("/__mock/chaos", headers={"Sec-Fetch-Site": "same-origin"}).status_code == 200


@pytest.mark.parametrize(("method", "path"), ADMIN + PROTOCOL_ROUTES)
@pytest.mark.parametrize("host", ["evil.example", "evil.example:8000", "127.0.0.1.nip.io", "[2001:db8::1]:80"])
def test_a_foreign_host_is_refused_on_every_route(c: httpx.Client, method: str, path: str, host: str) -> None:
    answer = c.request(method, path, headers={"Host": host}, content=b"{}")
    assert answer.status_code == 421, answer.text[:200]
    body = answer.json()
    assert set(body) == {"error"} and "--allowed-host" in body["error"]
    _no_cors(answer)


@pytest.mark.parametrize("host", ["localhost", "LOCALHOST:1234", "127.0.0.1", "127.1.2.3:80", "[::1]:9", "a.localhost"])
def test_loopback_names_are_served(c: httpx.Client, host: str) -> None:
    assert c.get("/health", headers={"Host": host}).status_code == 200
    assert c.get("/__mock/chaos", headers={"Host": host}).status_code == 200


def test_allowed_hosts_are_served(serve: Serve) -> None:
    with serve(allowed_hosts=("mock", ".example.test")) as server, httpx.Client(base_url=server.url) as c:
        for host in ("mock:8000", "example.test", "api.example.test"):
            assert c.get("/health", headers={"Host": host}).status_code == 200, host
        for host in ("mock2", "example.test.evil", "badexample.test"):
            assert c.get("/health", headers={"Host": host}).status_code == 421, host


@pytest.fixture(scope="module")
def guarded() -> Iterator[EmbeddedServer]:
    with EmbeddedServer(MockConfig(admin_token="s3cret-token")) as running:
        yield running


@pytest.mark.parametrize(("method", "path"), ADMIN)
def test_with_a_token_every_admin_route_wants_it(guarded: EmbeddedServer, method: str, path: str) -> None:
    with httpx.Client(base_url=guarded.url, timeout=10, verify=tls_context()) as c:
        for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": "s3cret-token"}):
            answer = c.request(method, path, headers=headers)
            assert answer.status_code == 401, (headers, answer.text[:200])
            assert answer.headers["WWW-Authenticate"].startswith("Bearer") and "token" in answer.json()["error"]
        served = c.request(method, path, headers={"Authorization": "Bearer s3cret-token"}, content=b"{}")
        assert served.status_code != 401


def test_the_token_guards_the_admin_api_only(guarded: EmbeddedServer) -> None:
    with httpx.Client(base_url=guarded.url, timeout=10, verify=tls_context()) as c:
        assert c.get("/ap/v1/agent/tasks").status_code == 200


def test_host_names() -> None:
    assert host_name("Example.ORG.:8080") == "example.org"
    assert host_name("[::1]:80") == "::1" and host_name("::1") == "::1"
    assert is_loopback("127.9.9.9") and is_loopback("[::1]") and is_loopback("x.localhost")
    assert not is_loopback("0.0.0.0") and not is_loopback("localhost.evil.example")


def test_a_non_loopback_address_needs_a_token() -> None:
    with pytest.raises(GateError, match="--admin-token"):
        Gate("0.0.0.0")
    with pytest.raises(GateError, match="--admin-token"):
        create_app(MockConfig(host="192.0.2.7"))
    with pytest.raises(GateError, match="empty"):
        Gate("127.0.0.1", admin_token="")
    wildcard = Gate("0.0.0.0", admin_token="t")
    assert wildcard.allows("192.0.2.7") and wildcard.allows("::1") and not wildcard.allows("evil.example")
    assert not Gate("192.0.2.7", admin_token="t").allows("192.0.2.8")


def test_the_cli_chooses_the_token() -> None:
    assert choose_admin_token(None, "127.0.0.1", {}) == (None, False)
    assert choose_admin_token(None, "127.0.0.1", {"MOCK_ADMIN_TOKEN": "env"}) == ("env", False)
    assert choose_admin_token("flag", "0.0.0.0", {"MOCK_ADMIN_TOKEN": "env"}) == ("flag", False)
    made, made_up = choose_admin_token(None, "0.0.0.0", {})
    assert made_up and made is not None and len(made) >= 32
    assert choose_admin_token(None, "0.0.0.0", {})[0] != made


def test_the_cli_reads_the_token_from_the_environment() -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "mockserver", "--port", "0", "--protocol", "agent-protocol"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO), "MOCK_ADMIN_TOKEN": "from-env"},
    )
    watchdog = threading.Timer(30, proc.kill)
    watchdog.start()
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().split()[3]
        with httpx.Client(base_url=url, timeout=5) as c:
            assert c.get("/__mock/chaos").status_code == 401
            assert c.get("/__mock/chaos", headers={"Authorization": "Bearer from-env"}).status_code == 200
    finally:
        watchdog.cancel()
        proc.terminate()
        proc.wait(15)
        if proc.stdout is not None:
            proc.stdout.close()


# -- a real browser -----------------------------------------------------------------------------

PAGE = """<!doctype html><html><head><title>pending</title></head><body><script>
const M = "%(mock)s", out = {};
async function attempt(name, f) {
  try { out[name] = await f(); } catch (e) { out[name] = "blocked:" + e.name; }
}
(async () => {
  await attempt("health", async () => (await fetch(M + "/health")).status);
  await attempt("journal", async () => (await fetch(M + "/__mock/journal")).text());
  await attempt("journal_credentials", async () =>
    (await fetch(M + "/__mock/journal", {credentials: "include"})).text());
  await attempt("resize", async () => (await fetch(M + "/__mock/journal",
    {method: "PUT", headers: {"Content-Type": "application/json"}, body: '{"size": 7}'})).status);
  await attempt("chaos_form", async () => (await fetch(M + "/__mock/chaos/rules", {method: "POST",
    mode: "no-cors", headers: {"Content-Type": "application/x-www-form-urlencoded"},
    body: '{"error": 503}'})).type);
  await attempt("reset", async () => (await fetch(M + "/__mock/reset",
    {method: "POST", mode: "no-cors"})).type);
  document.title = JSON.stringify(out);
})();
</script></body></html>"""


class _Page(AppServer):
    """The attacker's page, on another port of the same loopback address: another origin."""

    name = "hostile page"

    def __init__(self, html: str) -> None:
        super().__init__()
        self.html = html

    def make_app(self) -> web.Application:
        app = web.Application()

        async def page(request: web.Request) -> web.Response:
            return web.Response(text=self.html, content_type="text/html")

        app.router.add_get("/", page)
        return app


@pytest.mark.skipif(CHROMIUM is None, reason=MISSING)
def test_a_page_on_another_origin_cannot_read_or_change_the_mock(tmp_path: Path) -> None:
    with EmbeddedServer(MockConfig(journal=50)) as mock, httpx.Client(base_url=mock.url, timeout=10) as c:
        secret = "the developer's secret prompt"
        task = c.post("/ap/v1/agent/tasks", json={"input": secret}).json()["task_id"]
        assert secret in c.get("/__mock/journal").text
        with _Page(PAGE % {"mock": mock.url}) as page:
            title = page_title(page.url + "/", tmp_path / "profile", budget_ms=10000)
        assert title != "pending"
        seen = json.loads(title.replace("&quot;", '"'))
        assert seen["health"] == 200  # the page ran and reached the mock: a protocol route is readable
        for name in ("journal", "journal_credentials", "resize"):
            assert seen[name] == "blocked:TypeError", (name, seen[name])  # CORS refused the read
        assert seen["chaos_form"] == seen["reset"] == "opaque"  # sent, unreadable; and refused:
        assert c.get("/__mock/chaos").json()["rules"] == []
        assert c.get("/__mock/").json()["journal"]["size"] == 50
        assert c.get(f"/ap/v1/agent/tasks/{task}").status_code == 200
