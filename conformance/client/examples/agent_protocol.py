"""An Agent Protocol client for the ``client`` command's scenarios:
``python -m conformance.client.examples.agent_protocol [--break NAME]`` (``catalogue.py``)."""

from __future__ import annotations

import sys

from .calls import call, entry, expect, fields, patient

BREAKS = ("ignore-retry-after", "flood", "first-page-only", "past-the-end", "strict-fields", "bad-body")
TASKS = "/ap/v1/agent/tasks"


def list_pages(broken: str | None) -> None:
    page, total = 1, 1
    while page <= total:
        answer = expect(patient("GET", f"{TASKS}?current_page={page}&page_size=10", broken=broken), f"page {page}")
        listed = fields(answer)
        total = listed.get("pagination", {}).get("total_pages", 0)
        print(f"page {page}: {len(listed.get('tasks', []))} tasks")
        if broken == "first-page-only":
            return
        page += 1
    if broken == "past-the-end":
        call("GET", f"{TASKS}?current_page={page}&page_size=10")


def create(broken: str | None) -> None:
    body = {"input": 42} if broken == "bad-body" else {"input": "hello"}
    task = fields(expect(patient("POST", TASKS, body, broken=broken), "creating a task"))
    if broken == "strict-fields":
        unknown = set(task) - {"task_id", "input", "additional_input", "artifacts"}
        if unknown:
            raise ValueError(f"unexpected fields {sorted(unknown)}")  # the crash a strict model makes
    print(task.get("task_id", ""))


def main(argv: list[str] | None = None) -> int:
    tasks = {
        "list-pages": list_pages,
        "flaky-pages": list_pages,
        "retry-after": create,
        "busy": create,
        "unknown-fields": create,
        "redirect": list_pages,
        "gzip": list_pages,
    }
    return entry("agent_protocol", tasks, BREAKS, argv)


if __name__ == "__main__":
    sys.exit(main())
