"""SGR Agent Core's domain: agents, the plans a run streams, and the messages they are built from
(the rules are in handlers.py's docstring)."""

from __future__ import annotations

import copy
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import orjson

MODELS = ("sgr_agent", "sgr_tool_calling_agent", "tool_calling_agent")
DEFAULT_MODEL = "sgr_tool_calling_agent"
MAX_CLARIFICATIONS = 3
MAX_SEARCHES = 3
SOURCES_PER_SEARCH = 2
MAX_ECHOED_DATA_URL = 200
MAX_QUOTED = 200  # task and clarification texts are quoted in reports up to this length

INITED, RESEARCHING, WAITING = "inited", "researching", "waiting_for_clarification"
COMPLETED, CANCELLED = "completed", "cancelled"
RUNNING_STATES = (INITED, RESEARCHING, WAITING)

_AGENT_ID = re.compile(r"\b(\w+_[0-9a-f]{8}(?:-[0-9a-f]{4}){3}-[0-9a-f]{12})\b", re.IGNORECASE)
_CLARIFY = re.compile(r"\bclarify\b", re.IGNORECASE)
_WORD = re.compile(r"\w+")
_STOPWORDS = frozenset(
    {
        "about",
        "and",
        "are",
        "clarify",
        "for",
        "from",
        "how",
        "into",
        "please",
        "research",
        "that",
        "the",
        "this",
        "what",
        "which",
        "with",
    }
)


@dataclass(slots=True)
class Step:
    """One streamed content chunk and what producing it changes in the agent. Not frozen: a run
    builds a dozen, and a frozen dataclass's constructor costs three times as much; none is
    changed once made."""

    content: str
    reasoning: dict[str, Any] | None = None  # starts a new iteration with this reasoning
    search: bool = False  # one web search, finding SOURCES_PER_SEARCH sources


@dataclass(slots=True)
class Plan:
    steps: list[Step]
    end_state: str
    result: str | None = None


@dataclass(slots=True)
class Agent:
    agent_id: str
    model: str
    task_messages: list[Any]
    task: str
    size: int
    creation_time: str = field(default_factory=lambda: local_time_now())
    state: str = INITED
    iteration: int = 0
    searches_used: int = 0
    clarifications_used: int = 0
    sources_count: int = 0
    current_step_reasoning: dict[str, Any] | None = None
    execution_result: str | None = None
    clarification: str = ""

    def summary(self) -> dict[str, Any]:
        return {
            "agent_id": self.agent_id,
            "task_messages": self.task_messages,
            "state": self.state,
            "creation_time": self.creation_time,
        }

    def detail(self) -> dict[str, Any]:
        return {
            "agent_id": self.agent_id,
            "task_messages": self.task_messages,
            "state": self.state,
            "iteration": self.iteration,
            "searches_used": self.searches_used,
            "clarifications_used": self.clarifications_used,
            "sources_count": self.sources_count,
            "current_step_reasoning": self.current_step_reasoning,
            "execution_result": self.execution_result,
        }

    def apply(self, step: Step) -> None:
        if step.reasoning is not None:
            self.iteration += 1
            self.current_step_reasoning = step.reasoning
        if step.search:
            self.searches_used += 1
            self.sources_count += SOURCES_PER_SEARCH

    def finish(self, plan: Plan) -> None:
        self.state = plan.end_state
        self.execution_result = plan.result
        if plan.end_state == WAITING:
            self.clarifications_used += 1

    def cancel(self) -> None:
        """Stops a running or waiting agent; a finished one keeps its state."""
        if self.state in RUNNING_STATES:
            self.state = CANCELLED

    def abandon(self) -> None:
        """Its stream broke off mid-run; an agent that already asked or finished keeps its state."""
        if self.state in (INITED, RESEARCHING):
            self.state = CANCELLED


_clock: list[Any] = [None, ""]
"""The last second formatted by ``local_time_now`` and its text."""


def local_time_now() -> str:
    """The local time without offset, to the second (the seed's creation_time), formatted once a second."""
    now = int(time.time())
    if _clock[0] != now:
        _clock[0], _clock[1] = now, datetime.fromtimestamp(now).isoformat(timespec="seconds")
    return str(_clock[1])


# --- messages -------------------------------------------------------------------------------


def messages_of(body: Any) -> list[Any]:
    """The body's messages; tolerant, because a fault may switch request validation off."""
    messages = body.get("messages") if isinstance(body, dict) else None
    return messages if isinstance(messages, list) else []


def text_of(message: Any) -> str:
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [p for p in content if isinstance(p, dict) and p.get("type") == "text"]
        return " ".join(str(p.get("text", "")) for p in parts)
    return ""


def last_user_text(messages: list[Any]) -> str:
    for message in reversed(messages):
        if isinstance(message, dict) and message.get("role") == "user":
            return text_of(message)
    return ""


def quote(text: str) -> str:
    flat = " ".join(text[: MAX_QUOTED * 8].split())
    return flat if len(flat) <= MAX_QUOTED else flat[:MAX_QUOTED] + "..."


def named_ids(messages: list[Any]) -> Iterator[str]:
    for message in messages:
        text = text_of(message)
        if "-" in text:  # every agent id has the hyphens of its UUID: most texts need no scan
            yield from (m.group(1) for m in _AGENT_ID.finditer(text))


def echo(messages: list[Any]) -> list[Any]:
    """The task messages as the /agents endpoints show them: long data: URLs truncated."""
    echoed = _copy(messages)
    for message in echoed:
        content = message.get("content") if isinstance(message, dict) else None
        for part in content if isinstance(content, list) else ():
            image = part.get("image_url") if isinstance(part, dict) else None
            url = image.get("url") if isinstance(image, dict) else None
            if isinstance(url, str) and url.startswith("data:") and len(url) > MAX_ECHOED_DATA_URL:
                image["url"] = url[:MAX_ECHOED_DATA_URL] + "...[truncated]"  # type: ignore[index]
    return echoed


def _copy(messages: list[Any]) -> list[Any]:
    """A deep copy of parsed JSON: one native encode and decode, a sixth of ``copy.deepcopy``'s cost.
    orjson refuses integers beyond 64 bits (a free-form part may hold one): those take deepcopy."""
    try:
        copied: list[Any] = orjson.loads(orjson.dumps(messages))
    except TypeError:
        return copy.deepcopy(messages)
    return copied


def _keywords(text: str) -> list[str]:
    found: dict[str, str] = {}
    for word in _WORD.findall(text):
        if len(word) >= 3 and word.lower() not in _STOPWORDS:
            found.setdefault(word.lower(), word)
            if len(found) == MAX_SEARCHES:
                break
    return list(found.values())


# --- plans: what a run streams ----------------------------------------------------------------


def _opening(agent: Agent, resumed: bool) -> Step:
    # Upstream's agents announce themselves; stateless clients send the marker back to resume.
    if resumed:
        return Step(f"Clarification received: {agent.clarification}\n")
    return Step(f"Agent {agent.agent_id} started\n")


def _clarification_plan(agent: Agent, resumed: bool) -> Plan:
    reason = {"action": "clarification", "reason": "The request asks for a clarification first"}
    return Plan(
        [
            _opening(agent, resumed),
            Step("I need a clarification before researching:\n", reasoning=reason),
            Step(f"1. What exactly should the research on '{agent.task}' focus on?\n"),
            Step("2. Which region and time period matter?\n"),
        ],
        WAITING,
    )


def _research_plan(agent: Agent, resumed: bool) -> Plan:
    keywords = _keywords(agent.task)
    steps = [_opening(agent, resumed)]
    for word in keywords:
        reasoning = {"action": "web_search", "query": word, "reason": f"Need sources about {word}"}
        steps.append(Step(f"Searching the web for '{word}'\n", reasoning, True))
    lines = ["## Research report", f"Task: {agent.task}"]
    if agent.clarification:
        lines.append(f"Clarification: {agent.clarification}")
    lines += [f"- {word}: {SOURCES_PER_SEARCH} sources reviewed" for word in keywords]
    lines.append(f"Conclusion: research on {', '.join(keywords) or 'the task'} is complete.")
    final = {"action": "final_answer", "reason": "Enough data collected"}
    steps += [Step(line + "\n", final if i == 0 else None) for i, line in enumerate(lines)]
    return Plan(steps, COMPLETED, "".join(line + "\n" for line in lines))


def first_plan(agent: Agent) -> Plan:
    asks = bool(_CLARIFY.search(agent.task))
    return _clarification_plan(agent, False) if asks else _research_plan(agent, False)


def resume_plan(agent: Agent, messages: list[Any]) -> Plan:
    """Claims a waiting agent (no await before the run starts) and plans its continuation."""
    agent.clarification = quote(last_user_text(messages) or " ".join(text_of(m) for m in messages))
    agent.state = RESEARCHING
    asks = bool(_CLARIFY.search(agent.clarification)) and agent.clarifications_used < MAX_CLARIFICATIONS
    return _clarification_plan(agent, True) if asks else _research_plan(agent, True)
