"""One curl line per recorded request: the bytes that were sent, runnable as printed.

Both phases render their evidence here (schemathesis's interactions and the scenario client's
requests), so a vendor replays a property-based case and a scenario exchange the same way.
``-i`` prints the status line, so the line shows the answer the report recorded.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping

from ..verdicts.reproduction import CREDENTIALS

# Headers curl sets itself, or that only describe this one connection.
_OWN = frozenset({"host", "content-length", "connection", "user-agent", "accept-encoding", "transfer-encoding"})


PLACEHOLDER = re.compile(r"\$\{(" + "|".join(CREDENTIALS) + r")\}")
"""A credential a report names by its variable (``credentials.py``): a curl line expands it."""


def word(text: str) -> str:
    """``text`` as one shell word, taken literally but for the credentials it names
    (``'authorization: Bearer '"${TOKEN}"``), which the shell expands from the environment."""
    parts: list[str] = []
    last = 0
    for hit in PLACEHOLDER.finditer(text):
        if hit.start() > last:
            parts.append(shlex.quote(text[last : hit.start()]))
        parts.append(f'"{hit.group()}"')
        last = hit.end()
    if last < len(text) or not parts:
        parts.append(shlex.quote(text[last:]))
    return "".join(parts)


def printable(data: bytes) -> str | None:
    """``data`` as text when a shell word can carry it unchanged, else None."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return text if text.replace("\n", "").replace("\t", "").isprintable() else None


_PRINTF = [
    "%%" if byte == 0x25 else "\\\\" if byte == 0x5C else chr(byte) if 0x20 <= byte < 0x7F else f"\\{byte:03o}"
    for byte in range(256)
]
"""How ``printf`` writes each byte: % and backslash escaped, printable ASCII as itself, the rest in octal."""


def printf_format(data: bytes) -> str:
    """A quoted POSIX ``printf`` format that writes exactly ``data``: octal escapes for every byte
    outside printable ASCII (a shell word cannot hold NUL at all, so the bytes go through a pipe)."""
    return shlex.quote("".join(map(_PRINTF.__getitem__, data)))


def curl_command(method: str, url: str, headers: Mapping[str, str], body: bytes | None, *, stream: bool = False) -> str:
    """``curl -sS -i -X METHOD -H ... --data-binary BODY URL`` (``-N`` for a stream); a body that is
    not plain text is piped in from ``printf``."""
    parts = ["curl", "-sS", "-i"]
    if stream:
        parts.append("-N")
    parts += ["-X", method.upper()]
    for name, value in headers.items():
        if name.lower() not in _OWN:
            parts += ["-H", word(f"{name}: {value}")]
    prefix = ""
    if body:
        text = printable(body)
        if text is not None:
            parts += ["--data-binary", word(text)]
        else:
            prefix = f"printf -- {printf_format(body)} | "  # a multipart body starts with "--"
            parts += ["--data-binary", "@-"]
    # --globoff: brackets and braces in a generated query are data, not curl URL globs
    parts += ["--globoff", word(url)]
    return prefix + " ".join(parts)
