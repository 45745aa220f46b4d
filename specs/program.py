"""What the kit's programs say about themselves: the distribution's version (the one place it is
written; the build reads it from here, see pyproject.toml) and the name a program was invoked by.
Both halves print these in ``--version`` and usage lines, so the ground beneath both holds them."""

from __future__ import annotations

import os
import sys

__version__ = "0.2.0.dev0"


def program_name(module: str, argv0: str | None = None) -> str:
    """``agent-mock`` when run as the console script, ``python -m mockserver`` when run as a module
    (argparse's own default would print ``__main__.py``)."""
    name = os.path.basename(sys.argv[0] if argv0 is None else argv0)
    return f"python -m {module}" if name in ("", "__main__.py", "-c") else name
