"""SGR Agent Core requirements judged from traffic: each chat stream event by event as it is
forwarded (chunk schema, model = X-Agent-ID, the last chunk's finish_reason, [DONE] last), the
stream's headers, the agents the observed chats created (state, listing, deletion) and the error
bodies."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ...check.judgments import errors, lists
from ...check.passive import Bounded, Checks, StreamState, Verdict
from ...check.shown import shown
from ...check.streams import Frame
from ...check.traffic import Observed
from .requirements import (
    AGENT_ID,
    AGENTS,
    DETAIL,
    DONE,
    LISTED,
    RUNNING,
    WAITING,
    agent_names,
    chunk_problem,
    finish_reason,
    framed,
    framing_fault,
    mislabelled,
    misnamed,
    one_agent,
)

STREAMING = ("createChatCompletion", "provideClarification")


@dataclass(slots=True)
class Agent:
    messages: Any
    ended: float | None = None
    """When its latest stream ended cleanly (seconds since the epoch, by the exchange's clock)."""
    unfinished: int = 0
    """Its streams begun and not seen to end: one its client left may have cancelled it (the
    client's doing, not the server's), so its final state is no longer judged."""
    deleted: bool = False
    listed_states: list[str] = field(default_factory=list)


def _detail(body: Any) -> bool:
    """A DetailError, as the scenario checks' judgment (``errors.shape``) has it."""
    return errors.shaped(body, DETAIL["members"], DETAIL["nonempty"])


class Passive(Checks):
    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.models: set[str] = set()
        self.agents: Bounded[str, Agent] = Bounded()

    def stream_kind(self, ex: Observed) -> str | None:
        # a chat's 200 answer is read as a stream whatever it is labelled (SGR-STREAM-001 judges the label)
        return "sse" if ex.operation_id in STREAMING else super().stream_kind(ex)

    # streams --------------------------------------------------------------------------------------
    def on_stream_start(self, ex: Observed, v: Verdict, stream: StreamState) -> None:
        body = ex.request_json()
        request = body if isinstance(body, dict) else {}
        model = request.get("model")
        if ex.operation_id == "createChatCompletion" and request.get("stream") is False:
            v.fail("SGR-ERR-002", "stream=false was answered 200 with a stream, not 501")
        if ex.operation_id in STREAMING and ex.problems:  # as on_response judges a whole answer
            v.fail("SGR-ERR-004", f"{ex.operation_id} accepted an invalid body with a stream: {ex.problems[0]}")
        problem = mislabelled(ex.content_type, ex.response_headers.get("cache-control", ""))  # the scenario's rule
        v.check("SGR-STREAM-001", not problem, problem)
        agent_id = ex.response_headers.get("x-agent-id")
        stream.notes.update(agent_id=agent_id, chunks=0, done=False, last=None, models=set(), requested=model)
        new = ex.operation_id == "createChatCompletion" and isinstance(model, str) and not AGENT_ID.match(model)
        if new:
            problem = misnamed(agent_id, str(model))  # the scenario's rule
            v.check("SGR-STREAM-002", not problem, problem)
            v.check(
                "SGR-STREAM-003",
                ex.response_headers.get("x-agent-model") == model,
                f"X-Agent-Model {shown(ex.response_headers.get('x-agent-model'))} is not the requested {shown(model)}",
            )
            if agent_id:
                self.agents[agent_id] = Agent(request.get("messages"))
        stream.notes["agent"] = (
            agent_id
            or (ex.path_params.get("agent_id") if not new else None)
            or (model if isinstance(model, str) and AGENT_ID.match(model) else None)
        )
        resumed = None if new else self.agents.get(str(stream.notes["agent"]))
        if resumed is not None:  # running again: its state is judged after this stream's end, once seen
            resumed.ended = None
        streamed = self.agents.get(str(stream.notes["agent"]))
        if streamed is not None:
            streamed.unfinished += 1

    def on_frame(self, ex: Observed, v: Verdict, stream: StreamState, frame: Frame) -> None:
        notes = stream.notes
        where = f"event {frame.index + 1}"
        if notes["done"]:
            v.fail("SGR-STREAM-007", f"{where} came after data: [DONE]: {shown(frame.raw[:120])}")
            return
        v.check("SGR-STREAM-004", framed(frame), framing_fault(frame))
        if frame.raw == DONE:
            notes["done"] = True
            return
        problem = chunk_problem(frame, self.schemas)  # the scenario's rule
        v.check("SGR-STREAM-004", not problem, problem)
        if not isinstance(frame.value, dict):
            return
        notes["chunks"] += 1
        notes["last"] = frame.value
        model = frame.value.get("model")
        if notes["agent_id"]:
            v.check(
                "SGR-STREAM-005",
                model in agent_names(notes["agent_id"]),
                f"{where}: model {shown(model)} names neither X-Agent-ID {shown(notes['agent_id'])} nor its model",
            )
            v.check(
                "SGR-STREAM-008",
                model == notes["agent_id"],
                f"{where}: model {shown(model)} is not X-Agent-ID {shown(notes['agent_id'])}",
            )
        else:
            notes["models"].add(str(model))
            v.check(
                "SGR-STREAM-005",
                one_agent(notes["models"], notes["requested"]),
                f"{where}: chunk models {shown(sorted(notes['models']))} are not one agent id or the requested model",
            )

    def on_stream_end(self, ex: Observed, v: Verdict, stream: StreamState, error: str | None) -> None:
        notes = stream.notes
        streamed = self.agents.get(str(notes.get("agent")))
        if streamed is not None:
            streamed.unfinished -= 1
        if error:
            reason = f"the stream did not complete after {stream.frames} event(s): {error}"
            v.fail("SGR-STREAM-007", reason)
            v.fail("SGR-STREAM-004", reason)
            return
        v.check("SGR-STREAM-007", notes["done"], f"the stream ended after {stream.frames} event(s) without [DONE]")
        v.check("SGR-STREAM-004", notes["chunks"], "the stream carried no chat.completion.chunk")
        if notes["last"] is not None:
            v.check(
                "SGR-STREAM-006",
                finish_reason(notes["last"]) == "stop",
                f"the last chunk's finish_reason is {shown(finish_reason(notes['last']))}, not 'stop'",
            )
        agent = self.agents.get(str(notes.get("agent")))
        if agent is not None and notes["done"]:
            agent.ended = ex.started_at + ex.elapsed_ms / 1000  # the exchanges' clock: live or recorded

    # whole answers --------------------------------------------------------------------------------
    def on_response(self, ex: Observed, v: Verdict) -> None:
        op, status, body = ex.operation_id, ex.status, ex.json()
        request = ex.request_json() if isinstance(ex.request_json(), dict) else {}
        if op == "health" and status == 200:
            v.check(
                "SGR-SVC-001",
                isinstance(body, dict)
                and body.get("status") == "healthy"
                and isinstance(body.get("service"), str)
                and body["service"],
                f"the health answer {shown(body, 120)} is not status 'healthy' with a service name",
            )
        elif op == "listModels" and status == 200:
            self._models(v, body)
        elif op == "createChatCompletion":
            self._chat_error(ex, v, status, body, request)
        elif op == "listAgents" and status == 200:
            self._listed(ex, v, body)
        elif op == "getAgentState":
            self._state(ex, v, status, body)
        elif op == "deleteAgent" and status == 200:
            self._deleted(ex, v, body)
        if status == 404 and op in ("getAgentState", "provideClarification", "deleteAgent"):
            v.judged("SGR-ERR-003", errors.SHAPE, ex.seen(), DETAIL, f"{op} 404")
        if op in STREAMING and ex.problems and status is not None and 200 <= status < 300:
            v.fail("SGR-ERR-004", f"{op} accepted an invalid body ({status}): {ex.problems[0]}")
        if status == 422:
            detail = body.get("detail") if isinstance(body, dict) else None
            shaped = (
                isinstance(detail, list)
                and detail
                and all(
                    isinstance(d, dict)
                    and isinstance(d.get("type"), str)
                    and isinstance(d.get("msg"), str)
                    and isinstance(d.get("loc"), list)
                    for d in detail
                )
            )
            v.check("SGR-ERR-004", shaped, f"{op} 422: detail {shown(detail, 160)} is not a list of {{type, loc, msg}}")
            if shaped and isinstance(detail, list):
                where = [d["loc"] for d in detail]
                v.check("SGR-ERR-005", all(loc[:1] == ["body"] for loc in where), f"{op} 422: loc {where} not in body")

    def _models(self, v: Verdict, body: Any) -> None:
        data = body.get("data") if isinstance(body, dict) else None
        ok = (
            isinstance(body, dict)
            and body.get("object") == "list"
            and isinstance(data, list)
            and all(isinstance(m, dict) and m.get("object") == "model" and isinstance(m.get("id"), str) for m in data)
        )
        if v.check("SGR-MODEL-001", ok, f"the model list {shown(body, 160)} is not object 'list' of 'model's"):
            assert isinstance(data, list)
            self.models = {m["id"] for m in data}

    def _chat_error(self, ex: Observed, v: Verdict, status: int | None, body: Any, request: dict[str, Any]) -> None:
        model = request.get("model")
        if request.get("stream") is False:
            v.check(
                "SGR-ERR-002",
                status == 501 and _detail(body),
                f'stream=false answered {status} {shown(body, 120)}, not 501 {{"detail": string}}',
            )
        elif (
            self.models
            and isinstance(model, str)
            and model not in self.models
            and not AGENT_ID.match(model)
            and not ex.problems
        ):
            v.check(
                "SGR-ERR-001",
                status == 400 and _detail(body),
                f'unknown model {shown(model)} answered {status} {shown(body, 120)}, not 400 {{"detail": string}}',
            )
        elif status == 400:
            v.judged("SGR-ERR-001", errors.SHAPE, ex.seen(), DETAIL, "400")

    def _listed(self, ex: Observed, v: Verdict, body: Any) -> None:
        """The scenario checks' judgment (``lists.holds``) with what the traffic made and deleted."""
        if not isinstance(body, dict) or not isinstance(body.get("agents"), list):
            return  # the document judge reports the shape
        done = {i: a for i, a in self.agents.items() if not a.deleted and a.ended is not None}
        made = [{"id": agent_id, "members": {"task_messages": agent.messages}} for agent_id, agent in done.items()]
        v.judged("SGR-AGENT-001", lists.HOLDS, ex.seen(), {**AGENTS, "made": made}, "GET /agents")
        gone = [agent_id for agent_id, agent in self.agents.items() if agent.deleted]
        if gone:
            v.judged("SGR-AGENT-004", lists.HOLDS, ex.seen(), {**LISTED, "gone": gone}, "GET /agents")

    def _state(self, ex: Observed, v: Verdict, status: int | None, body: Any) -> None:
        agent_id = ex.path_params.get("agent_id", "")
        agent = self.agents.get(agent_id)
        if agent is None:
            return
        if agent.deleted:
            v.check("SGR-AGENT-004", status == 404, f"the deleted agent {agent_id}'s state answered {status}, not 404")
            v.check("SGR-SCHEMA-009", status == 404, f"the deleted agent {agent_id} is still served ({status})")
            return
        if status != 200 or not isinstance(body, dict):
            return
        problems = self.violations_of("AgentStateResponse", body)
        v.check("SGR-AGENT-002", not problems, f"state of {agent_id} lacks documented fields: {problems}")
        v.check(
            "SGR-AGENT-002",
            body.get("agent_id") == agent_id and body.get("task_messages") == agent.messages,
            f"state of {agent_id}: agent_id {shown(body.get('agent_id'))}, task_messages "
            f"{shown(body.get('task_messages'), 120)} are not those of the chat that created it",
        )
        state = body.get("state")
        if agent.ended is None or agent.unfinished or state == WAITING:
            return
        if state in RUNNING:
            late = ex.started_at - agent.ended
            v.check(
                "SGR-AGENT-003",
                late <= self.settle_s,
                f"the agent is still {state} {late:.1f} s after its stream ended",
            )
            return
        result = body.get("execution_result")
        v.check(
            "SGR-AGENT-003",
            state == "completed" and isinstance(result, str) and result.strip(),
            f"after its stream ended the agent is {shown(state)} with execution_result {shown(result, 80)}",
        )

    def _deleted(self, ex: Observed, v: Verdict, body: Any) -> None:
        agent_id = ex.path_params.get("agent_id", "")
        ok = (
            isinstance(body, dict)
            and body.get("agent_id") == agent_id
            and body.get("deleted") is True
            and isinstance(body.get("final_state"), str)
        )
        v.check(
            "SGR-AGENT-004", ok, f"the delete answer {shown(body, 160)} is not {{agent_id, deleted: true, final_state}}"
        )
        agent = self.agents.get(agent_id)
        if agent is not None:
            agent.deleted = True
