"""The safe-origin gate: which ``Host`` names the mock answers to, and who may use its admin API.

A mock on a developer's machine is reachable by every web page their browser opens. Three rules
keep those pages out (docs/mock.md, "Threat model"):

- **Host.** A DNS-rebinding page reaches the mock under the page's own name (``evil.example``
  resolved to 127.0.0.1), so every request, protocol and admin alike, must name a host the mock
  listens on: a loopback name or address, the address it is bound to, or a name given with
  ``--allowed-host``. Others are refused with 421 in a protocol-neutral shape. The port is not
  compared: a rebinding page cannot choose the name, whatever the port.
- **No cross-origin admin.** The admin API under ``/__mock/`` never answers CORS, and a request a
  browser marks as coming from another origin (``Origin``, ``Sec-Fetch-Site``) is refused with
  403 before it acts, so a form post or ``no-cors`` fetch, which a browser sends without asking,
  changes nothing either.
- **Admin token.** With ``--admin-token`` (or ``MOCK_ADMIN_TOKEN``) every admin request must carry
  ``Authorization: Bearer <token>``, else 401. A mock that listens on a non-loopback address
  cannot run without one (``python -m mockserver`` makes one up and prints it).
"""

from __future__ import annotations

import hmac
import ipaddress
import json
from collections.abc import Iterable

from aiohttp import hdrs, web

ADMIN_REALM = 'Bearer realm="mock admin"'
TOKEN_ENV = "MOCK_ADMIN_TOKEN"
LOOPBACK_NAMES = ("localhost",)
KNOWN_LIMIT = 256
"""Distinct allowed ``Host`` values remembered for the one-lookup check; a client that sends more
(ports are free to vary) is still checked, only not remembered."""
SAME_ORIGIN = ("same-origin", "none")
"""``Sec-Fetch-Site`` values a browser sends for a page of the mock itself or a typed address."""


class GateError(ValueError):
    """A setting that would leave the admin API open (a non-loopback address without a token)."""


def _address(name: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(name)
    except ValueError:
        return None


def is_loopback(host: str) -> bool:
    """Whether a listen address (or a ``Host`` name) stays on this machine."""
    name = host.strip("[]").rstrip(".").lower()
    if name in LOOPBACK_NAMES or name.endswith(".localhost"):  # RFC 6761: browsers resolve these locally
        return True
    address = _address(name)
    return address is not None and address.is_loopback


def host_name(header: str) -> str:
    """The name of a ``Host`` header: no port, no brackets, no trailing dot, lower case."""
    value = header.strip().lower()
    if value.startswith("["):  # [v6]:port
        return value[1 : value.find("]")] if "]" in value else value[1:]
    name, sep, port = value.rpartition(":")
    if sep and port.isdigit() and ":" not in name:
        value = name
    return value.rstrip(".")


def error(status: int, message: str, headers: dict[str, str] | None = None) -> web.Response:
    """The gate's answers: ``{"error": ...}``, the same shape on every route, as the admin API's."""
    return web.Response(
        body=json.dumps({"error": message}).encode(), status=status, content_type="application/json", headers=headers
    )


class Gate:
    def __init__(self, bound: str = "127.0.0.1", allowed: Iterable[str] = (), admin_token: str | None = None) -> None:
        self.bound = host_name(bound)
        self.allowed = tuple(host_name(a) if a != "*" else a for a in allowed)
        if admin_token is not None and not admin_token:
            raise GateError("the admin token is empty")
        if admin_token is None and not is_loopback(self.bound):
            raise GateError(
                f"listening on {bound}, a non-loopback address, the admin API needs a token: "
                f"--admin-token TOKEN or {TOKEN_ENV}"
            )
        self.token = admin_token.encode() if admin_token is not None else None
        self.known: set[str | None] = {None}
        """``Host`` values already allowed (None: a request without one, which no browser sends):
        the hot path's whole check is a lookup here."""

    # -- Host ----------------------------------------------------------------------------------
    def allows(self, name: str) -> bool:
        if "*" in self.allowed or is_loopback(name) or name == self.bound:
            return True
        if any(name == a or (a.startswith(".") and (name.endswith(a) or name == a[1:])) for a in self.allowed):
            return True
        address = _address(name)
        bound = _address(self.bound)
        # a wildcard bind answers on every address of the machine: an address cannot be rebound
        return address is not None and bound is not None and bound.is_unspecified

    def refuse_host(self, request: web.Request) -> web.Response | None:
        """None when the request's ``Host`` is one the mock answers to; else the 421 to send."""
        header = request.headers.get(hdrs.HOST)
        if header is None or header in self.known:
            return None
        name = host_name(header)
        if self.allows(name):
            if len(self.known) < KNOWN_LIMIT:
                self.known.add(header)
            return None
        return error(
            421,
            f"this mock does not answer to the host {name!r} (a page that rebound its name to this "
            f"machine?); it answers to {', '.join(self.names())}; start it with --allowed-host {name} "
            "to add it",
        )

    def names(self) -> list[str]:
        return sorted({"localhost", "127.0.0.1", "::1", self.bound, *self.allowed})

    # -- admin ---------------------------------------------------------------------------------
    def refuse_admin(self, request: web.Request) -> web.Response | None:
        """None when an admin request may act; else the 421, 403 or 401 to send."""
        refused = self.refuse_host(request)
        if refused is not None:
            return refused
        headers = request.headers
        origin = headers.get(hdrs.ORIGIN)
        site = headers.get("Sec-Fetch-Site")
        own = f"{request.scheme}://{headers.get(hdrs.HOST, '')}"
        if (origin is not None and origin != own) or (site is not None and site not in SAME_ORIGIN):
            return error(
                403,
                f"the admin API does not answer pages of other origins ({origin or site}); "
                "call it from a client or a terminal",
            )
        if self.token is not None:
            scheme, _, presented = headers.get(hdrs.AUTHORIZATION, "").partition(" ")
            given = presented.strip().encode("utf-8", "surrogateescape")
            if scheme.lower() != "bearer" or not hmac.compare_digest(given, self.token):
                return error(
                    401,
                    f"the admin API needs its token: send Authorization: Bearer <token> "
                    f"(the mock's --admin-token or {TOKEN_ENV})",
                    {"WWW-Authenticate": ADMIN_REALM},
                )
        return None
