"""The ``client`` command's driver for agent-protocol-client 1.1.0 (Agent Protocol): reads
CONFORMANCE_BASE_URL and CONFORMANCE_SCENARIO, does the scenario's task the way an application
using the client would, exits 0 when the client returned what the task needs and 1 when it raised.

Run with the client's own venv (it pins pydantic<2 and urllib3<2; see peers.py). The client has no
retry of its own (its aiohttp RESTClientObject raises ApiException on any status outside 2xx), and
the driver adds none: what it exits is what the client made of the answers. Listing walks the
pages the way the client's models describe them: current_page 1 up to pagination.total_pages.
"""

from __future__ import annotations

import asyncio
import os
import sys
from typing import Any

import agent_protocol_client as apc


async def list_every_task(api: Any) -> list[str]:
    ids: list[str] = []
    page, last = 1, 1
    while page <= last:
        listed = await api.list_agent_tasks(current_page=page)
        ids.extend(task.task_id for task in listed.tasks)
        last = listed.pagination.total_pages
        page += 1
    return ids


async def main(base: str, scenario: str) -> int:
    async with apc.ApiClient(apc.Configuration(host=base)) as client:
        api = apc.AgentApi(client)
        try:
            if scenario in ("list-pages", "flaky-pages", "redirect", "gzip"):
                print(len(await list_every_task(api)))
            else:
                task = await api.create_agent_task(task_request_body=apc.TaskRequestBody(input="hello"))
                print(task.task_id)
        except apc.ApiException as exc:
            print(f"gave up: ApiException {exc.status}", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main(os.environ["CONFORMANCE_BASE_URL"], os.environ["CONFORMANCE_SCENARIO"])))
