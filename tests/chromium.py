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


def page_dom(url: str, profile: Path, *, budget_ms: int = 5000, files: bool = False) -> str:
    """The page's DOM once its scripts ran (what a measuring page wrote into it included)."""
    done = subprocess.run(
        headless(profile, "--dump-dom", url, budget_ms=budget_ms, files=files),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert "<html" in done.stdout, done.stderr[-2000:]
    return done.stdout


def page_title(url: str, profile: Path, *, budget_ms: int = 5000, files: bool = False) -> str:
    """The title a page has once its scripts ran: the tests' pages write what they measured there."""
    title = re.search(r"<title>([^<]*)</title>", page_dom(url, profile, budget_ms=budget_ms, files=files))
    assert title is not None
    return title.group(1)


def screenshot(url: str, profile: Path, shot: Path, width: int, height: int = 1600) -> None:
    """A PNG of the page's top ``height`` pixels at ``width``, for a person to look at."""
    subprocess.run(
        headless(profile, f"--window-size={width},{height}", f"--screenshot={shot}", url, files=True),
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert shot.is_file() and shot.stat().st_size > 1000, f"no screenshot of {url}"
