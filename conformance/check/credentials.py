"""The credentials a run was given, kept out of everything it writes.

A report is made to be handed over, so no token given to a run reaches it: every result's evidence
and message names each token by a shell variable instead (``${TOKEN}``, ``${SECOND_TOKEN}``). A
curl line or a finding's script expands it from the environment where it runs (``TOKEN=...
sh reproduce/X.sh``); ``conformance replay`` and ``verify`` are given the tokens again (command
line or environment) and put them back (``fill``).
"""

from __future__ import annotations

import base64
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from ..verdicts.reproduction import CREDENTIALS as VARIABLES
from ..verdicts.results import Exchange, RequirementResult
from .curl import PLACEHOLDER, curl_command


def placeholder(name: str) -> str:
    return "${" + name + "}"


@dataclass(frozen=True, slots=True)
class Credentials:
    """The secrets of a run by variable name (``TOKEN`` -> the bearer token)."""

    values: Mapping[str, str]

    @classmethod
    def of(cls, token: str | None, second_token: str | None) -> Credentials:
        given = dict(zip(VARIABLES, (token, second_token), strict=True))
        return cls({name: value for name, value in given.items() if value})

    @classmethod
    def from_environment(
        cls, token: str | None, second_token: str | None, environ: Mapping[str, str] | None = None
    ) -> Credentials:
        """As given on the command line, else ``CONFORMANCE_TOKEN``/``CONFORMANCE_SECOND_TOKEN``
        (the run's own variables), else ``TOKEN``/``SECOND_TOKEN`` (the scripts')."""
        env = os.environ if environ is None else environ
        found = [
            given or env.get(f"CONFORMANCE_{name}") or env.get(name) or None
            for name, given in zip(VARIABLES, (token, second_token), strict=True)
        ]
        return cls.of(*found)

    def redact(self, text: str) -> str:
        """``text`` with each secret named by its placeholder (the longest first: one may hold
        another). A token shorter than ``SHORT`` is a word text may hold by chance (a test's ``t``):
        it is named only where it stands as a credential (``header``)."""
        for name, value in sorted(self.values.items(), key=lambda kv: -len(kv[1])):
            if len(value) >= SHORT:
                text = text.replace(value, placeholder(name))
        return text

    def header(self, value: str) -> str:
        """A header's value with each secret named: a credential whole (``Bearer t``), whatever its
        length, and a longer one wherever it stands."""
        scheme, _, rest = value.partition(" ")
        for name, secret in self.values.items():
            if value == secret:
                return placeholder(name)
            if rest == secret:
                return f"{scheme} {placeholder(name)}"
        return self.redact(value)

    def fill(self, text: str) -> str:
        """``text`` with each placeholder replaced by its secret (``missing`` says which it lacks)."""
        return PLACEHOLDER.sub(lambda m: self.values.get(m.group(1), m.group(0)), text)

    def named(self) -> dict[str, str]:
        """Each secret -> its placeholder: how a replay names a token an answer echoes."""
        return {value: placeholder(name) for name, value in self.values.items()}

    def missing(self, exchanges: Iterable[Exchange]) -> list[str]:
        """The variables the requests name that these credentials do not hold."""
        return [name for name in variables(exchanges) if name not in self.values]

    def __bool__(self) -> bool:
        return bool(self.values)


SHORT = 6
"""Characters from which a token is named wherever it appears (a shorter one: where it is a credential)."""
NONE = Credentials({})


def variables(exchanges: Iterable[Exchange]) -> list[str]:
    """The credentials' variables the requests name (their URL, headers and body)."""
    texts = (text for ex in exchanges for text in (ex.url, *ex.request_headers.values(), ex.request_body or ""))
    used = {m.group(1) for text in texts for m in PLACEHOLDER.finditer(text)}
    return [name for name in VARIABLES if name in used]


def redact_exchange(ex: Exchange, credentials: Credentials) -> None:
    """``ex`` with every secret named (in place), and its curl line rendered again from it."""
    if not credentials:
        return
    r = credentials.redact
    before = ex.url, dict(ex.request_headers), ex.request_body, ex.request_body_base64
    ex.url = r(ex.url)
    ex.request_headers = {k: credentials.header(v) for k, v in ex.request_headers.items()}
    ex.response_headers = {k: credentials.header(v) for k, v in ex.response_headers.items()}
    ex.request_body = r(ex.request_body) if ex.request_body is not None else None
    ex.response_body = r(ex.response_body) if ex.response_body is not None else None
    ex.error = r(ex.error) if ex.error is not None else None
    if ex.request_body_base64 is not None:
        raw = base64.b64decode(ex.request_body_base64)
        for name, value in credentials.values.items():
            if len(value) >= SHORT:
                raw = raw.replace(value.encode(), placeholder(name).encode())
        ex.request_body_base64 = base64.b64encode(raw).decode()
    if before != (ex.url, ex.request_headers, ex.request_body, ex.request_body_base64):
        body = ex.sent_body
        if body is not None or ex.request_body is None:
            ex.curl = curl_command(ex.method, ex.url, ex.request_headers, body, stream=" -N " in ex.curl)
        else:  # the report kept only the start of the body: the line as it was, its secrets named
            ex.curl = r(ex.curl)


def redact_result(res: RequirementResult, credentials: Credentials) -> RequirementResult:
    """A result with no secret left in its message, evidence or findings (in place)."""
    if not credentials:
        return res
    res.message = credentials.redact(res.message)
    for ex in res.evidence:
        redact_exchange(ex, credentials)
    for finding in res.findings:
        finding.message = credentials.redact(finding.message)
        for ex in finding.evidence:
            redact_exchange(ex, credentials)
    return res
