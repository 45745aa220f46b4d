"""The console entry point, kept free of imports so that the re-execution below is cheap.

One seed must give one verdict, so string hashing is pinned first: schemathesis and hypothesis
walk sets and dicts of strings while generating, and their order follows PYTHONHASHSEED, which
CPython randomises per process. Re-executing once with it fixed makes ``--seed N`` reproduce a
run exactly (an explicit PYTHONHASHSEED is respected). The suite's own imports (schemathesis,
hypothesis, httpx, aiohttp: a second or more) happen only in the process that runs.

``judge`` (a finding's script calls it once per answer it compares) imports the judgments alone
(``judge.py``), not the whole command line.

The re-execution runs ``python -m conformance``; the name the user typed (``agent-conformance``)
travels to it in ``PROGRAM`` so that ``--version`` and usage lines name the program as invoked.
"""

from __future__ import annotations

import os
import sys

from specs.program import program_name

PROGRAM = "AGENT_CONFORMANCE_PROGRAM"


def entry() -> int:
    prog = os.environ.pop(PROGRAM, None) or program_name("conformance")
    if "PYTHONHASHSEED" not in os.environ:
        os.environ["PYTHONHASHSEED"] = "0"
        os.environ[PROGRAM] = prog
        os.execv(sys.executable, [sys.executable, "-m", "conformance", *sys.argv[1:]])
    if sys.argv[1:2] == ["judge"]:  # a script's call per answer it compares: the judgments alone
        from conformance.cli.judge import main as judge

        return judge(sys.argv[1:], prog)
    from conformance.cli.commands import main

    return main(prog=prog)
