"""NeuroSan's domain: the built-in agent networks and what each answers (see handlers.py)."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(slots=True)
class Turn:
    """What one network does for one user message (made on every chat: not frozen, whose
    constructor costs three times as much; none is changed once made)."""

    tool_args: dict[str, Any]
    tool_result: str
    answer: str
    sly_data: dict[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class Network:
    name: str
    description: str
    tags: tuple[str, ...]
    front: str
    instructions: str
    tool: str
    tool_display_as: str
    parameters: dict[str, Any]
    sample_queries: tuple[str, ...]
    respond: Callable[[str, int], Turn]
    tools: tuple[str, ...] | None = None
    """Every tool the front man calls (a stubbed network's); None: the one ``tool``."""

    def connectivity(self) -> dict[str, Any]:
        tools = [self.tool] if self.tools is None else list(self.tools)
        return {
            "connectivity_info": [
                {"origin": self.front, "tools": tools, "display_as": "llm_agent"},
                *({"origin": tool, "tools": [], "display_as": self.tool_display_as} for tool in tools),
            ],
            "metadata": {
                "description": self.description,
                "tags": list(self.tags),
                "sample_queries": list(self.sample_queries),
            },
        }

    def function(self) -> dict[str, Any]:
        return {"function": {"description": self.description, "parameters": self.parameters}}

    def info(self) -> dict[str, Any]:
        return {"agent_name": self.name, "description": self.description, "tags": list(self.tags)}


def _hello(text: str, turn: int) -> Turn:
    return Turn(
        tool_args={"inquiry": text},
        tool_result=f"Synonyms considered for: {text}",
        answer=f"Hello, world! You said: {text}. (turn {turn})",
    )


# Operands are bounded (15 digits) so that no input can make the arithmetic or its formatting costly.
_ARITHMETIC = re.compile(r"(-?\d{1,15}(?:\.\d{1,15})?)\s*([-+*/x])\s*(-?\d{1,15}(?:\.\d{1,15})?)")


def _number(raw: str) -> int | float:
    return float(raw) if "." in raw else int(raw)


def _calculate(found: re.Match[str]) -> str:
    a, op, b = _number(found.group(1)), found.group(2), _number(found.group(3))
    if op == "/":
        return "undefined (division by zero)" if b == 0 else format(a / b, ".12g")
    value = a + b if op == "+" else a - b if op == "-" else a * b
    return format(value, ".12g") if isinstance(value, float) else str(value)


def _math(text: str, turn: int) -> Turn:
    found = _ARITHMETIC.search(text)
    if found is None:
        answer = f"I could not find an arithmetic expression like '2 + 3' in: {text}. (turn {turn})"
        return Turn({"expression": text}, "no expression found", answer)
    result = _calculate(found)
    return Turn({"expression": found.group(0)}, result, f"{found.group(0)} = {result}. (turn {turn})")


QUESTION_COST = 3.0


def _music(text: str, turn: int) -> Turn:
    # The accountant charges per question; the running cost follows from the turn number alone.
    cost = QUESTION_COST * turn
    answer = (
        f"On '{text}': put the record on and listen twice. That question cost ${QUESTION_COST:.2f}; "
        f"running cost ${cost:.2f}. (turn {turn})"
    )
    return Turn({"running_cost": cost - QUESTION_COST}, f'{{"running_cost": {cost}}}', answer, {"running_cost": cost})


def _inquiry(description: str) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {"inquiry": {"type": "string", "description": description}},
        "required": ["inquiry"],
    }


NETWORKS: dict[str, Network] = {
    n.name: n
    for n in (
        Network(
            "hello_world",
            "I can help you make a terse announcement.",
            ("example", "basic"),
            "announcer",
            "You are an announcer: greet the world and repeat what you were told.",
            "synonymizer",
            "llm_agent",
            _inquiry("The text to announce."),
            ("Announce that the mock is up",),
            _hello,
        ),
        Network(
            "math_guy",
            "I can do simple arithmetic on two numbers.",
            ("example", "coded_tool"),
            "MathGuy",
            "You answer arithmetic questions by calling the calculator.",
            "calculator",
            "coded_tool",
            _inquiry("An arithmetic question such as 'what is 6 * 7'."),
            ("What is 6 * 7?",),
            _math,
        ),
        Network(
            "music_nerd_pro",
            "I answer questions about music, for a fee per question.",
            ("example", "sly_data"),
            "MusicNerdPro",
            "You are a music nerd; every answer is billed through the Accountant.",
            "Accountant",
            "coded_tool",
            _inquiry("A question about music."),
            ("Which album should I play first?",),
            _music,
        ),
    )
}
