"""What the reproduction tests share: the tokens the scripts and replay are given again, the faults
whose findings they reproduce, and a finding's ``sh`` script run against a mock."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from dataclasses import fields
from typing import Any

from conformance.engine.runner import EMBEDDED_TOKENS
from conformance.verdicts.reproduction import CREDENTIALS
from mockserver import catalogue

TOKENS = dict(zip(CREDENTIALS, EMBEDDED_TOKENS, strict=True))
"""The reports name the tokens; the scripts and replay are given them again."""


def breaking(protocol: str) -> list[str]:
    """The protocol's faults that break something (a control's run has no finding)."""
    return sorted(n for n, f in catalogue().items() if f.protocol == protocol and f.breaks)


def run_script(text: str, url: str, *, kit: bool = False) -> tuple[int, str]:
    """A finding's script against ``url``: its exit status and the end of what it printed; every
    call bounded by ``MAX_TIME``, the script by 120 s. ``kit``: the kit's commands on PATH (the
    script then asks ``agent-conformance judge``), else sh and curl alone."""
    with tempfile.NamedTemporaryFile("w", suffix=".sh", delete=False, encoding="utf-8") as file:
        file.write(text)
    env = {**os.environ, "MAX_TIME": "10", **TOKENS}
    if kit:
        env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
    try:
        # run outside the checkout: without ``kit``, ``python3 -m conformance`` must not find the
        # kit's package from the working folder (it did, and failed on its dependencies: a
        # quarter of a second of import per script, for no verdict)
        done = subprocess.run(
            ["sh", file.name, url], capture_output=True, timeout=120, env=env, cwd=os.path.dirname(file.name)
        )
    except subprocess.TimeoutExpired:
        return -1, "the script ran past 120 s"
    finally:
        os.unlink(file.name)
    return done.returncode, done.stdout.decode("utf-8", "replace")[-800:]


def add(into: Any, other: Any) -> None:
    """Each field of the dataclass ``other`` added to ``into``'s (counts summed, lists joined): the
    tally of one finding or run folded into a fault's."""
    for f in fields(other):
        setattr(into, f.name, getattr(into, f.name) + getattr(other, f.name))
