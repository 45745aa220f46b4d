"""The judgments (conformance/check/judgments): pure rules, named once, that a check, the proxy,
replay and the scripts share; ``agent-conformance judge`` runs one for a script."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from conformance.check.judgments import JUDGMENTS, Seen, UnknownJudgment, judge, renamed
from conformance.check.judgments.echoes import MEMBERS
from conformance.check.judgments.errors import SHAPE
from conformance.check.judgments.lists import HOLDS, KEPT, NEWEST_FIRST, miscounted
from conformance.check.judgments.pages import BEYOND, NUMBERS
from conformance.check.script import script
from conformance.cli.commands import main
from conformance.verdicts.reproduction import Reproduction, stale_facts
from conformance.verdicts.results import Exchange

TASKS = {"items": "tasks"}


def page(total: int, pages: int, current: int, size: int, items: int) -> Seen:
    body = {
        "tasks": [{"task_id": f"t{n}"} for n in range(items)],
        "pagination": {"total_items": total, "total_pages": pages, "current_page": current, "page_size": size},
    }
    url = f"http://127.0.0.1:1/ap/v1/agent/tasks?current_page={current}&page_size={size}"
    return Seen("GET", url, 200, {"content-type": "application/json"}, json.dumps(body).encode())


def test_page_numbers_holds_on_a_fair_page_and_fails_a_rounded_down_total() -> None:
    assert judge(NUMBERS, page(5, 3, 1, 2, 2), TASKS) == []  # the control: ceil(5 / 2) = 3
    assert judge(NUMBERS, page(5, 3, 3, 2, 1), TASKS) == []  # a partly filled last page
    (problem,) = judge(NUMBERS, page(5, 2, 1, 2, 2), TASKS)  # ap-page-floor-total-pages
    assert "page 1 of 5 items at page_size 2: pagination" in problem and '"total_pages": 3' in problem


def test_page_numbers_fails_a_page_that_ignores_current_page_or_holds_too_many() -> None:
    assert judge(NUMBERS, page(5, 3, 1, 2, 2), TASKS) == []
    assert judge(NUMBERS, page(5, 3, 2, 2, 3), TASKS) == ["page 2 of 5 items at page_size 2 holds 3 items, not 2"]
    wrong = Seen("GET", "http://h/ap/v1/agent/tasks?current_page=2&page_size=2", 200, {}, page(5, 3, 1, 2, 2).body)
    assert "current_page" in judge(NUMBERS, wrong, TASKS)[0]


def test_page_numbers_names_an_answer_that_is_no_page_and_leaves_a_page_past_the_end_to_its_owner() -> None:
    assert judge(NUMBERS, Seen("GET", "http://h/x", 200, {}, b"[]"), TASKS)[0].startswith("the answer is not")
    assert judge(NUMBERS, page(5, 3, 9, 2, 4), TASKS) == []  # what lies past the end: AP-PAGE-004 judges it
    assert judge(BEYOND, page(5, 3, 9, 2, 0), TASKS) == []
    assert judge(BEYOND, page(5, 3, 9, 2, 2), TASKS) == ["page 9 beyond the last of 5 items at page_size 2: 2 items"]


def test_a_replay_gives_the_judgment_todays_ids_and_an_unknown_name_is_said() -> None:
    assert renamed({"ids": ["old-1", "x"], "n": 3}, {"old-1": "new-1"}) == {"ids": ["new-1", "x"], "n": 3}
    made = {"made": {"old-1": {"task_messages": ["old-1"]}}}  # lists.holds keys what it made by id
    assert renamed(made, {"old-1": "new-1"}) == {"made": {"new-1": {"task_messages": ["new-1"]}}}
    assert NUMBERS in JUDGMENTS
    with pytest.raises(UnknownJudgment):
        judge("no.such", page(1, 1, 1, 1, 1), {})


def test_the_judge_command_prints_what_a_script_reads(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    body, head = tmp_path / "body", tmp_path / "head"
    head.write_text("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n")
    url = "http://h/ap/v1/agent/tasks?current_page=1&page_size=2"
    args = ["judge", NUMBERS, "--facts", json.dumps(TASKS), "--url", url, "--status", "200", "--headers", str(head)]
    body.write_bytes(page(5, 2, 1, 2, 2).body)
    assert main([*args, "--body", str(body)]) == 0
    assert capsys.readouterr().out.startswith("shows: pages.numbers: page 1 of 5 items")
    body.write_bytes(page(5, 3, 1, 2, 2).body)
    assert main([*args, "--body", str(body)]) == 1
    assert capsys.readouterr().out.startswith("holds: ")
    assert main(["judge", "no.such", "--url", url, "--status", "200"]) == 2
    capsys.readouterr()
    # facts that do not fit the judgment (another finding's, edited by hand): one line, exit 2
    assert main([*args[:2], "--facts", "{}", *args[4:], "--body", str(body)]) == 2
    assert capsys.readouterr().err == "error: the facts hold no 'items', which the judgment pages.numbers reads\n"
    assert main([*args[:2], "--facts", "[1]", *args[4:], "--body", str(body)]) == 2
    assert capsys.readouterr().err.startswith("error: ")


@pytest.mark.parametrize(
    ("members", "fair", "broken"),
    [
        ({"members": {"message": "string"}}, {"message": "Task not found"}, {"error": "Task not found"}),
        ({"members": {"detail": "string"}, "nonempty": ["detail"]}, {"detail": "no agent"}, {"detail": ""}),
        ({"members": {"code": "integer", "message": "string"}}, {"code": 5, "message": "x"}, {"code": "NOT_FOUND"}),
    ],
    ids=["agent-protocol", "sgr-agent-core", "neuro-san"],
)
def test_one_error_shape_judgment_for_each_protocols_error_body(
    members: dict[str, object], fair: dict[str, object], broken: dict[str, object]
) -> None:
    def answer(body: dict[str, object]) -> Seen:
        return Seen("GET", "http://h/x", 404, {}, json.dumps(body).encode())

    assert judge(SHAPE, answer(fair), members) == []
    (problem,) = judge(SHAPE, answer(broken), members)
    assert problem.startswith("body ") and " is not {" in problem
    assert judge(SHAPE, Seen("GET", "http://h/x", 404, {}, b"<html>"), members) != []


def test_a_script_hands_the_kit_its_facts_whole_through_a_file(tmp_path: Path) -> None:
    """The facts a script gives ``agent-conformance judge`` are the finding's, byte for byte, however
    long (an argument of a command is bounded; the shell's own printf is not) or quoted."""
    sent = {"input": "quotes ' \" $HOME `x` \\ \n" + "é🚀" * 40_000, "additional_input": {"k": [1, True]}}
    post = Exchange("POST", "http://h/ap/v1/agent/tasks", {}, json.dumps(sent), 200, {}, "{}")
    rep = Reproduction([post], judgment=MEMBERS, facts={"sent": sent})
    text = script(rep, "AP-TASK-002|POST /ap/v1/agent/tasks|scenario:x", "http://h")
    (line,) = [n for n in text.splitlines() if n.endswith('> "$D/facts"')]
    (tmp_path / "facts.sh").write_text(f'D="$1"\n{line}\n', "utf-8")
    subprocess.run(["sh", str(tmp_path / "facts.sh"), str(tmp_path)], check=True)
    assert json.loads((tmp_path / "facts").read_text("utf-8")) == {"sent": sent}
    assert f"judge {MEMBERS} --facts @" in text


def test_facts_naming_an_id_the_recorded_server_made_are_not_judged_again() -> None:
    """An id the recorded server made, which no call takes from today's answers, cannot be renamed
    to today's: the replay and the script compare instead of judging again. What the client sent
    first (a question a write carried and its answer echoed) is the client's, not stale."""
    create = Exchange("POST", "http://h/tasks", {}, '{"input": "ask-123"}', 200, {}, '{"task_id": "task-9f2e41"}')
    listing = Exchange("GET", "http://h/tasks", {}, None, 200, {}, '{"tasks": []}')
    rep = Reproduction([create, listing], judgment=MEMBERS, facts={"sent": {"input": "ask-123"}, "id": "task-9f2e41"})
    assert stale_facts(rep) == ["task-9f2e41"]
    assert "judge " not in script(rep, "AP-X|GET /tasks|scenario:x", "http://h")
    rep.facts.pop("id")
    assert stale_facts(rep) == []
    assert f"judge {MEMBERS}" in script(rep, "AP-X|GET /tasks|scenario:x", "http://h")


def test_page_numbers_fails_a_total_short_of_the_items_the_client_made() -> None:
    # ap-artifacts-list-agent-only: the run made 5, the list counts none
    assert judge(NUMBERS, page(5, 3, 1, 2, 2), {**TASKS, "at_least": 5}) == []  # the control
    (problem,) = judge(NUMBERS, page(0, 0, 1, 2, 0), {**TASKS, "at_least": 5})
    assert "total_items 0 counts fewer than the 5 items known to be listed" in problem


def agents(*listed: dict[str, object], total: int | None = None) -> Seen:
    body = {"agents": list(listed), "total": len(listed) if total is None else total}
    return Seen("GET", "http://127.0.0.1:1/agents", 200, {}, json.dumps(body).encode())


def test_a_list_holds_what_was_made_as_made_counts_itself_and_leaves_out_what_was_removed() -> None:
    facts = {"items": "agents", "id": "agent_id", "total": "total"}
    made = {**facts, "made": [{"id": "a1", "members": {"task_messages": ["hi"]}}], "gone": ["a2"]}
    assert judge(HOLDS, agents({"agent_id": "a1", "task_messages": ["hi"]}), made) == []  # the control
    assert judge(HOLDS, agents({"agent_id": "a1", "task_messages": ["hi"]}, total=3), facts) == [
        "total 3 does not count the 1 agents listed"
    ]
    (changed,) = judge(HOLDS, agents({"agent_id": "a1", "task_messages": ["HI"]}), made)
    assert changed.startswith("a1 is listed with task_messages")
    assert judge(HOLDS, agents(), made)[0].startswith("a1 is not listed")
    assert judge(HOLDS, agents({"agent_id": "a1", "task_messages": ["hi"]}, {"agent_id": "a2"}), made) == [
        "a2 is still listed"
    ]


def test_a_count_refused_writes_left_as_it_was_holds_and_one_they_grew_fails() -> None:
    facts = {"count": ["pagination", "total_items"], "before": 6, "refused": "the refused bodies"}
    assert judge(KEPT, page(6, 6, 1, 1, 1), facts) == []  # the control: nothing made
    # ap-create-accepts-invalid: each invalid create made a task
    assert judge(KEPT, page(13, 13, 1, 1, 1), facts) == [
        "pagination.total_items is 13 after the refused bodies, 6 before"
    ]
    no_count = Seen("GET", "http://h/ap/v1/agent/tasks", 200, {}, b"{}")
    assert judge(KEPT, no_count, facts) == ["pagination.total_items is null after the refused bodies, 6 before"]


def sessions(*stamps: str) -> Seen:
    body = {"page": [{"sessionId": f"s{n}", "startedOn": stamp} for n, stamp in enumerate(stamps)]}
    return Seen("POST", "http://h/repo/v1/agent/sessions/list", 200, {}, json.dumps(body).encode())


def test_a_list_newest_first_holds_and_one_oldest_first_fails() -> None:
    facts = {"items": "page", "by": "startedOn"}
    newest = ("2026-12-05T10:00:02.000Z", "2026-12-05T10:00:01.000Z", "2026-12-05T10:00:01.000Z")
    assert judge(NEWEST_FIRST, sessions(*newest), facts) == []  # the control, a tie included
    assert judge(NEWEST_FIRST, sessions("2026-12-05T09:00:02-01:00", "2026-12-05T10:00:01Z"), facts) == []  # instants
    # syn-list-oldest-first
    assert judge(NEWEST_FIRST, sessions(*reversed(newest)), facts) == [
        'startedOn does not descend along the page: "2026-12-05T10:00:01.000Z" is listed before '
        '"2026-12-05T10:00:02.000Z"'
    ]
    assert judge(NEWEST_FIRST, sessions("not a time", newest[0]), facts) == []  # a value no instant: the schema's
    assert judge(NEWEST_FIRST, Seen("POST", "http://h/x", 200, {}, b"[]"), facts)[0].startswith("the answer is not")


def test_a_count_that_counts_its_items_holds() -> None:
    assert miscounted("total", 3, 3, "agents") is None
    # sgr-total-counts-deleted
    assert miscounted("total", 4, 3, "agents") == "total 4 does not count the 3 agents listed"
