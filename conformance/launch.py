"""The console entry point, kept free of imports so that the re-execution below is cheap.

One seed must give one verdict, so string hashing is pinned first: schemathesis and hypothesis
walk sets and dicts of strings while generating, and their order follows PYTHONHASHSEED, which
CPython randomises per process. Re-executing once with it fixed makes ``--seed N`` reproduce a
run exactly (an explicit PYTHONHASHSEED is respected). The suite's own imports (schemathesis,
hypothesis, httpx, aiohttp: a second or more) happen only in the process that runs.
"""

from __future__ import annotations

import os
import sys


def entry() -> int:
    if "PYTHONHASHSEED" not in os.environ:
        os.environ["PYTHONHASHSEED"] = "0"
        os.execv(sys.executable, [sys.executable, "-m", "conformance", *sys.argv[1:]])
    from .cli import main

    return main()
