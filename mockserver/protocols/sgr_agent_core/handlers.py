"""SGR Agent Core: OpenAI-compatible streaming research agents kept in the server's memory.

Agents are simulated. A chat completion creates the agent ``{model}_{uuid4}`` and streams a
short, deterministic "research" built from the words of the last user message; the agent then
ends ``completed`` with its report as ``execution_result``. An agent works only while its stream
is open (nothing runs in the background), so no task outlives its request.

Settled where the document is silent (recorded here because the mock is its reference):
- Clarification rule: an agent asks for a clarification when the last user message contains the
  word "clarify" (any case). It streams its questions, ends the stream (finish_reason "stop",
  ``[DONE]``) and waits in ``waiting_for_clarification``. ``clarifications_used`` counts the
  requests (the document's wording; upstream counts the answers). A clarification that itself
  says "clarify" is asked again, up to ``MAX_CLARIFICATIONS`` requests per agent.
- A waiting agent is resumed by POST /agents/{id}/provide_clarification, or by
  /v1/chat/completions whose ``model`` is its id or (as upstream) one of whose messages names it
  in its text. Either stream carries X-Agent-ID but not X-Agent-Model, as upstream.
- provide_clarification for an agent that is not waiting: 200 with a short stream that says so
  (one content chunk, the final chunk, ``[DONE]``) and leaves the agent as it was. Upstream also
  accepts it with 200, but its stream never ends; the document's 500 would be a server error for
  a client's mistake (the schema phase rightly flags any 5xx), and it names no 4xx for it.
- /v1/chat/completions checks ``stream`` before ``model`` (501 before 400), as upstream.
- DELETE of a running or waiting agent reports final_state "cancelled". A running stream sees it
  before its next chunk and ends with the final chunk and ``[DONE]``, as upstream's does.
- A client that disconnects mid-stream cancels the agent (state "cancelled"; it stays listed).
- creation_time is local time without offset, to the second (seed example). Only ``data:`` image
  URLs longer than 200 characters are truncated when echoed (the document; upstream cuts any URL).
- Chunks carry the agent id as ``model``; the first delta has role "assistant", the last is ``{}``.

faults.py breaks one requirement per fault: behaviours are switched on through its typed
``Switches`` (resolved once when the protocol is mounted), JSON answers are edited by ``mutate``.
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

from aiohttp import web

from ...api import Call, Handlers, ProtocolApi, operation
from ...errors import ApiError
from ...faults import TextEdits
from ...reply import Reply
from ...store import RacyIds, new_hex_id
from ...streaming import SseStream, stall
from .faults import LONG_MESSAGE, Switches
from .models import (
    CANCELLED,
    COMPLETED,
    DEFAULT_MODEL,
    INITED,
    MODELS,
    RESEARCHING,
    RUNNING_STATES,
    WAITING,
    Agent,
    Plan,
    first_plan,
    messages_of,
    resume_plan,
    text_of,
)
from .store import AgentStore
from .stubs import Data

SERVICE = "SGR Agent Core API"
MODEL_CREATED = 1234567890  # upstream's placeholder timestamp


# --- streaming --------------------------------------------------------------------------------


def _chunk(chunk_id: str, agent_id: str, delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {
        "id": chunk_id,
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": agent_id,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


def stored_messages(messages: list[Any], on: Switches) -> list[Any]:
    """The task messages as the edge faults store them (the unfaulted mock keeps them verbatim)."""

    edits = TextEdits(
        nfc=on.task_messages_nfc,
        trimmed=on.task_messages_trimmed,
        column=on.task_messages_column,
        astral=on.task_messages_astral_replaced,
    )
    if on.content_parts_flattened:  # a text-only message model: the parts' texts joined, the rest lost
        messages = [
            {**m, "content": text_of(m)} if isinstance(m, dict) and isinstance(m.get("content"), list) else m
            for m in messages
        ]
    return [
        {**m, "content": edits.apply(m["content"])} if isinstance(m, dict) and isinstance(m.get("content"), str) else m
        for m in messages
    ]


class _SseStream(SseStream):
    event_field: bool = False
    """sgr-sse-event-field: each event named with an ``event:`` line, which the document rules out."""
    multiline_data: bool = False
    """sgr-sse-multiline-data: each chunk pretty-printed over several ``data:`` lines (a reader joins
    them back, but the document fixes one line an event)."""

    async def send(self, obj: Any) -> None:
        if not (self.event_field or self.multiline_data):
            return await super().send(obj)
        lines = json.dumps(obj, indent=1).splitlines() if self.multiline_data else [json.dumps(obj)]
        head = b"event: chunk\n" if self.event_field else b""
        await self._write(head + b"".join(b"data: " + line.encode() + b"\n" for line in lines) + b"\n")

    async def send_raw(self, data: bytes) -> None:
        """Bytes as they are: the broken-framing faults."""
        await self._write(data)


async def _run(agent: Agent, plan: Plan, stream: _SseStream, on: Switches) -> None:
    agent.state = RESEARCHING
    completion_id = f"chatcmpl-{new_hex_id()}"
    model = agent.model if on.chunk_model_name else "gpt-4o-mini" if on.chunk_model_llm else agent.agent_id

    edited = on.created_milliseconds or on.wrong_chunk_object

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        body = _chunk(completion_id, model, delta, finish)
        if edited:
            if on.created_milliseconds:
                body["created"] = int(time.time() * 1000)
            if on.wrong_chunk_object:
                body["object"] = "chat.completion"
        return body

    for number, step in enumerate(plan.steps):
        if agent.state == CANCELLED:  # deleted meanwhile: end the stream as upstream does
            break
        if on.stall_mid_stream and number == 2:
            await stall(request=stream.request)  # ends early once the client has gone
        agent.apply(step)
        delta = {"role": "assistant", "content": step.content} if number == 0 else {"content": step.content}
        await stream.send(chunk(delta))
        if on.non_json_event and number == 0:
            await stream.send_raw(f"data: {step.content.strip()}\n\n".encode())
    if agent.state != CANCELLED and not (on.state_stuck and plan.end_state == COMPLETED):
        agent.finish(plan)  # before the final chunk: a client that read [DONE] sees the end state
    await stream.send(chunk({}, None if on.no_finish_stop else "stop"))
    if not on.missing_done:
        await stream.done()


class SgrAgentCore(Handlers):
    """The agents of one store; ``on`` holds the behaviour faults of this run."""

    protocol = "sgr-agent-core"
    data: Data

    def __init__(self, api: ProtocolApi) -> None:
        super().__init__(api)
        self.store = api.stateful(lambda: AgentStore(api.config.limits))
        self.on = Switches.of(api.faults)
        self.data = Data()
        self.racy_ids = RacyIds()
        """sgr-create-race's agent ids: chats started at the same moment take one."""
        self.ghosts: dict[str, Agent] = {}
        """The deleted agents the sgr-deleted-agent-listed fault still lists."""
        self.deleted = 0
        """Agents deleted so far: the counter sgr-total-counts-deleted never subtracts."""

    async def stream_run(self, call: Call, agent: Agent, plan: Plan, headers: dict[str, str]) -> web.StreamResponse:
        """Streams one run of ``agent``; the caller holds the stream gate."""
        on = self.on
        if on.json_content_type:
            headers = {**headers, "Content-Type": "application/json"}
        stream = _SseStream(call.request, headers, delay=self.api.config.stream_delay)
        stream.event_field, stream.multiline_data = on.sse_event_field, on.sse_multiline_data
        try:
            await stream.open()
            await _run(agent, plan, stream, on)
            if agent.state == WAITING and on.clarifications_counted_twice:
                agent.clarifications_used += 1  # counted when asked and again when the stream closes
            if agent.state == WAITING and on.result_while_waiting:
                agent.execution_result = "Waiting for your clarification"  # the questions stored as the result
            return await stream.close()
        except ConnectionResetError:  # the client left (aiohttp's reset error derives from it)
            agent.abandon()
            return stream.response
        except asyncio.CancelledError:  # server shutdown
            agent.abandon()
            raise

    async def stream_notice(self, call: Call, agent: Agent, text: str) -> web.StreamResponse:
        """A one-message stream that leaves ``agent`` as it is; the caller holds the stream gate."""
        stream = SseStream(call.request, {"X-Agent-ID": agent.agent_id}, delay=self.api.config.stream_delay)
        completion_id = f"chatcmpl-{new_hex_id()}"
        try:
            await stream.open()
            await stream.send(_chunk(completion_id, agent.agent_id, {"role": "assistant", "content": text}))
            await stream.send(_chunk(completion_id, agent.agent_id, {}, "stop"))
            if not self.on.notice_stream_no_done:
                await stream.done()
            return await stream.close()
        except ConnectionResetError:
            return stream.response

    async def resume(self, call: Call, agent: Agent, messages: list[Any]) -> web.StreamResponse:
        gate = self.api.gate
        if agent.state != WAITING:
            with gate:
                return await self.stream_notice(
                    call, agent, f"Agent {agent.agent_id} is not waiting for clarification (state: {agent.state})\n"
                )
        with gate:
            if self.on.clarification_ignored and call.operation_id == "provideClarification":
                return await self.stream_notice(call, agent, "Clarification received\n")
            plan = resume_plan(agent, messages)
            stubbed = self.data.models.get(agent.model) if self.data.models else None
            if stubbed is not None:
                plan = stubbed.plan(agent, resumed=True)
            if self.on.task_messages_replaced:
                agent.task_messages = list(messages)  # the conversation's latest turn overwrote the task
            return await self.stream_run(call, agent, plan, {"X-Agent-ID": agent.agent_id})

    @operation("health")
    async def health(self, call: Call) -> Reply:
        return Reply({"status": "healthy", "service": SERVICE})

    @operation("listModels")
    async def list_models(self, call: Call) -> Reply:
        names = [*MODELS, *self.data.models]
        data = [{"id": m, "object": "model", "created": MODEL_CREATED, "owned_by": "sgr-agent-core"} for m in names]
        return Reply({"data": data, "object": "list"})

    @operation("createChatCompletion")
    async def create_chat_completion(self, call: Call) -> web.StreamResponse:
        on = self.on
        body = call.body if isinstance(call.body, dict) else {}
        if on.content_parts_rejected and any(
            isinstance(m, dict) and isinstance(m.get("content"), list) for m in messages_of(body)
        ):
            # the fault: a text-only message model, stricter than the document's content parts
            raise ApiError(422, "Invalid request: message content must be a string")
        if body.get("stream", True) is False and not on.stream_false_accepted:
            if on.stream_false_crashes:
                raise ApiError(500, "Internal Server Error")
            raise ApiError(501, "Only streaming responses are supported. Set 'stream=true'")
        messages = messages_of(body)
        if on.long_message_refused and any(
            len(str(m.get("content"))) > LONG_MESSAGE for m in messages if isinstance(m, dict)
        ):
            raise ApiError(
                422, f"Invalid request: message content longer than {LONG_MESSAGE} characters"
            )  # a fair limit
        model = body.get("model", DEFAULT_MODEL)
        waiting = None if on.chat_ignores_waiting_agent else self.store.waiting(model, messages)
        if waiting is not None:
            return await self.resume(call, waiting, messages)
        stubbed = self.data.models.get(model) if self.data.models and isinstance(model, str) else None
        if model not in MODELS and stubbed is None:
            if on.unknown_model_404:
                raise ApiError(404, f"Model '{model}' not found")
            raise ApiError(400, f"Invalid model '{model}'. Available models: {[*MODELS, *self.data.models]}")
        uuid = await self.racy_ids.take() if on.create_race else None
        with self.api.gate:
            agent = self.store.add(model, stored_messages(messages, on), uuid)
            headers = {"X-Agent-ID": agent.agent_id, "X-Agent-Model": model}
            if on.missing_agent_id:
                del headers["X-Agent-ID"]
            if on.missing_model_header:
                del headers["X-Agent-Model"]
            plan = stubbed.plan(agent, resumed=False) if stubbed is not None else first_plan(agent)
            return await self.stream_run(call, agent, plan, headers)

    @operation("provideClarification")
    async def provide_clarification(self, call: Call) -> web.StreamResponse:
        return await self.resume(call, self.store.get(call.path["agent_id"]), messages_of(call.body))

    @operation("listAgents")
    async def list_agents(self, call: Call) -> Reply:
        on = self.on
        agents = [
            agent.summary()
            for agent in self.store.agents.values()
            if not (on.list_drops_finished and agent.state not in RUNNING_STATES)
        ]
        agents += [agent.summary() for agent in self.ghosts.values()]
        if on.list_newest_3:
            agents = agents[-3:]  # a "recent agents" query
        if on.list_newest_10:
            agents = agents[-10:]  # a default page size
        if on.list_state_at_creation:
            agents = [{**a, "state": INITED} for a in agents]  # the row written when the agent was created
        total = len(agents) + (self.deleted if on.total_counts_deleted else 0)
        return Reply({"agents": agents, "total": total})

    @operation("getAgentState")
    async def get_agent_state(self, call: Call) -> Reply:
        return Reply(self.store.get(call.path["agent_id"]).detail())

    @operation("deleteAgent")
    async def delete_agent(self, call: Call) -> Reply:
        if self.on.deleted_agent_served:
            agent = self.store.get(call.path["agent_id"])  # the fault: cancelled, but kept in the store
            agent.cancel()
            return Reply({"agent_id": agent.agent_id, "deleted": True, "final_state": agent.state})
        agent = self.store.remove(call.path["agent_id"])
        self.deleted += 1
        agent.cancel()  # a running stream notices before its next chunk
        if self.on.deleted_agent_listed:
            self.ghosts[agent.agent_id] = agent
        return Reply({"agent_id": agent.agent_id, "deleted": True, "final_state": agent.state})
