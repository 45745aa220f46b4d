"""The NeuroSan model's readings of a chat_context and of the agent's description."""

from __future__ import annotations

from conformance.protocols.neuro_san.model import described
from conformance.protocols.neuro_san.requirements import asked, brief, histories

FRONT = [{"tool": "announcer", "instantiation_index": 0}]


def context(*messages: dict[str, object]) -> dict[str, object]:
    return {
        "chat_histories": [
            {"origin": FRONT, "messages": list(messages)},
            {"origin": [{"tool": "synonymizer"}], "messages": []},
        ]
    }


def test_histories_are_keyed_by_origin_and_compared_by_type_text_and_origin() -> None:
    held = histories(
        context({"type": "HUMAN", "text": "hi"}, {"type": "AI", "text": "hello", "origin": FRONT, "sly_data": {"x": 1}})
    )
    assert len(held) == 2
    [front] = [m for m in held.values() if m]
    assert [brief(m) for m in front] == [
        {"type": "HUMAN", "text": "hi", "origin": None},
        {"type": "AI", "text": "hello", "origin": FRONT},
    ]
    assert histories({"chat_histories": "not a list"}) == {} and histories(None) == {}


def test_a_question_counts_only_as_a_human_message_after_the_history_sent_back() -> None:
    messages = [{"type": "HUMAN", "text": "one"}, {"type": "AI", "text": "two"}]
    assert asked(messages, "one") and not asked(messages, "two")
    assert not asked(messages, "one", start=1)


def test_connectivity_is_compared_by_its_graph_not_its_free_form_metadata() -> None:
    a = {"connectivity_info": [{"origin": "announcer"}], "metadata": {"served": 1}}
    b = {"connectivity_info": [{"origin": "announcer"}], "metadata": {"served": 2}}
    assert described("connectivity", a) == described("connectivity", b)
    assert described("function", {"function": {"description": "x"}}) != described("function", {"function": {}})
