"""Freeze each protocol's requirements as a named set of this release (``verdicts/sets.py``).

    python scripts/freeze_requirement_set.py 2026.12            # every protocol's set of 2026.12
    python scripts/freeze_requirement_set.py 2027.03 --protocol neuro-san

A released set never changes: the script refuses to overwrite one, and
``tests/conformance/verdicts/test_requirement_sets.py`` holds each one's manifest (add the new
set's there, as the test's failure says).
"""

from __future__ import annotations

import argparse
import sys

from conformance import __version__
from conformance.run.suites import all_suites
from conformance.verdicts.sets import SETS, dump, freeze


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("release", help="the release's name, e.g. 2026.12")
    parser.add_argument("--protocol", action="append", help="only these protocols (default: every one)")
    args = parser.parse_args()
    for pid, protocol_suite in sorted(all_suites().items()):
        if args.protocol and pid not in args.protocol:
            continue
        rset = freeze(f"{pid}/{args.release}", __version__, [c.requirement for c in protocol_suite.registry])
        path = SETS / pid / f"{args.release}.json"
        if path.exists():
            print(f"{rset.name} is released already ({path.name}): a set never changes", file=sys.stderr)
            return 1
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(dump(rset), encoding="utf-8")
        print(f"{rset.name}: {len(rset.requirements)} requirements")
    return 0


if __name__ == "__main__":
    sys.exit(main())
