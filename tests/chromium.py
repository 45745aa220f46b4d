"""Headless Chromium for the tests that need a real browser (the report page at two widths, a page
on another origin against the mock's gate): Debian's package, installed by ``.ci/run``; the tests
skip, saying so, where it is missing."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
MISSING = "headless Chromium is not installed (apt-get install chromium)"


def headless(profile: Path, *args: str, budget_ms: int = 5000, files: bool = False) -> list[str]:
    """A headless command line: a fresh profile, nothing fetched in the background, ``files`` lets a
    file:// page read its neighbours (an iframe harness measuring a report)."""
    assert CHROMIUM is not None
    return [
        CHROMIUM,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={profile}",
        *(["--allow-file-access-from-files"] if files else []),
        f"--virtual-time-budget={budget_ms}",
        *args,
    ]


def page_title(url: str, profile: Path, *, budget_ms: int = 5000, files: bool = False) -> str:
    """The title a page has once its scripts ran: the tests' pages write what they measured there."""
    done = subprocess.run(
        headless(profile, "--dump-dom", url, budget_ms=budget_ms, files=files),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    title = re.search(r"<title>([^<]*)</title>", done.stdout)
    assert title is not None, done.stderr[-2000:]
    return title.group(1)
