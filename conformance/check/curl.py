"""One curl line per recorded request: the bytes that were sent, runnable as printed.

Both phases render their evidence here (schemathesis's interactions and the scenario client's
requests), so a vendor replays a property-based case and a scenario exchange the same way.
``-i`` prints the status line, so the line shows the answer the report recorded.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping

# Headers curl sets itself, or that only describe this one connection.
_OWN = frozenset({"host", "content-length", "connection", "user-agent", "accept-encoding", "transfer-encoding"})


def printable(data: bytes) -> str | None:
    """``data`` as text when a shell word can carry it unchanged, else None."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return text if all(ch.isprintable() or ch in "\n\t" for ch in text) else None


def printf_format(data: bytes) -> str:
    """A quoted POSIX ``printf`` format that writes exactly ``data``: octal escapes for every byte
    outside printable ASCII (a shell word cannot hold NUL at all, so the bytes go through a pipe)."""
    out = []
    for byte in data:
        if byte == 0x25:  # %
            out.append("%%")
        elif byte == 0x5C:  # backslash
            out.append("\\\\")
        elif 0x20 <= byte < 0x7F:
            out.append(chr(byte))
        else:
            out.append(f"\\{byte:03o}")
    return shlex.quote("".join(out))


def curl_command(method: str, url: str, headers: Mapping[str, str], body: bytes | None, *, stream: bool = False) -> str:
    """``curl -sS -i -X METHOD -H ... --data-binary BODY URL`` (``-N`` for a stream); a body that is
    not plain text is piped in from ``printf``."""
    parts = ["curl", "-sS", "-i"]
    if stream:
        parts.append("-N")
    parts += ["-X", method.upper()]
    for name, value in headers.items():
        if name.lower() not in _OWN:
            parts += ["-H", shlex.quote(f"{name}: {value}")]
    prefix = ""
    if body:
        text = printable(body)
        if text is not None:
            parts += ["--data-binary", shlex.quote(text)]
        else:
            prefix = f"printf -- {printf_format(body)} | "  # a multipart body starts with "--"
            parts += ["--data-binary", "@-"]
    # --globoff: brackets and braces in a generated query are data, not curl URL globs
    parts += ["--globoff", shlex.quote(url)]
    return prefix + " ".join(parts)
