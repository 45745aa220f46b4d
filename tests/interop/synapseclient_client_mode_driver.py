"""The ``client`` command's driver for synapseclient (4.14): reads CONFORMANCE_BASE_URL (which ends
in /repo/v1), CONFORMANCE_TOKEN and CONFORMANCE_SCENARIO, does the scenario's task the way an
application using synapseclient would, and exits 0 when the client returned what was asked, 1 when
it raised. It adds no check of its own, so the verdicts are the client's. synapseclient lists no
agent sessions, so ``list-pages`` is not one of its tasks (exit 2: not attempted).
"""

from __future__ import annotations

import os
import sys
import tempfile

import synapseclient
from synapseclient.core.exceptions import SynapseError
from synapseclient.models import AgentSession


def login(home: str) -> synapseclient.Synapse:
    root = os.environ["CONFORMANCE_BASE_URL"].removesuffix("/repo/v1")
    syn = synapseclient.Synapse(
        repoEndpoint=root + "/repo/v1",
        authEndpoint=root + "/auth/v1",
        fileHandleEndpoint=root + "/file/v1",
        portalEndpoint=root + "/",
        skip_checks=True,
        cache_client=False,
        silent=True,
        configPath=os.path.join(home, "synapseConfig"),
        cache_root_dir=os.path.join(home, "cache"),
    )
    syn.login(authToken=os.environ["CONFORMANCE_TOKEN"], silent=True)
    return syn


def main() -> int:
    scenario = os.environ["CONFORMANCE_SCENARIO"]
    if scenario == "list-pages":
        print("synapseclient has no call that lists agent sessions", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as home:
        try:
            syn = login(home)
            if scenario in ("redirect", "gzip"):  # login read the profile (GET /userProfile)
                print(syn.restGET("/userProfile")["userName"])  # its REST helper, as an application reads it
                return 0
            session = AgentSession().start(synapse_client=syn)
            if scenario == "job-poll":
                print(session.prompt(prompt="hello", synapse_client=syn).response)
            else:
                print(session.id)
        except (SynapseError, OSError) as exc:
            print(f"gave up: {type(exc).__name__}: {exc}", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
