"""The ceiling: bare aiohttp handlers answering the benchmarked operations with similar bodies.

No routing table from a document, no validation, no store, no error shapes: each handler parses
what it must (the JSON body) and serializes a body shaped like the mock's answer, per request, with
the JSON library the mock uses (orjson) and the same headers, so that the two do the same HTTP work
byte for byte and the gap is the mock's own work.

    python bench/bare_server.py --port 8100 [--loop asyncio|uvloop]

It runs on the event loop the mock runs on (uvloop when installed, else asyncio; ``--loop`` names
one), started the way the mock starts its own (``specs.serving.run``, the heap settled with
``heap.settle`` as the mock settles its own), so that the ceiling is read on the same loop and
under the same garbage collector settings.
"""

from __future__ import annotations

import argparse
import time
import uuid
from typing import Any

import orjson
from aiohttp import web

from specs import heap
from specs.serving import add_loop_argument, run, stop_on_signals

TASK_INPUT = "Write 'Washington' to the file 'output.txt'."
STORED_TASKS = [
    {
        "task_id": str(uuid.uuid4()),
        "input": TASK_INPUT,
        "additional_input": {"debug": False, "mode": "benchmarks"},
        "artifacts": [],
    }
    for _ in range(5)
]

_ANNOUNCER = [{"tool": "announcer", "instantiation_index": 0}]
_TOOLS = [*_ANNOUNCER, {"tool": "synonymizer", "instantiation_index": 0}]
_ANSWER = "Hello, world! You said: Announce that the benchmark is running. (turn 1)"
NEURO_SAN_FRAMES: list[dict[str, Any]] = [
    {"response": m}
    for m in (
        {
            "type": "SYSTEM",
            "text": "You are an announcer: greet the world and repeat what you were told.",
            "origin": _ANNOUNCER,
        },
        {
            "type": "AGENT",
            "text": "Received arguments inquiry='Announce that the benchmark is running'",
            "origin": _TOOLS,
        },
        {
            "type": "AGENT_TOOL_RESULT",
            "text": "Synonyms considered for: Announce that the benchmark is running",
            "origin": _ANNOUNCER,
            "tool_result_origin": _TOOLS,
        },
        {"type": "AI", "text": _ANSWER, "origin": _ANNOUNCER},
        {
            "type": "AGENT_FRAMEWORK",
            "text": _ANSWER,
            "origin": _ANNOUNCER,
            "chat_context": {
                "chat_histories": [
                    {
                        "origin": _ANNOUNCER,
                        "messages": [
                            {"type": "HUMAN", "text": "Announce that the benchmark is running"},
                            {"type": "AI", "text": _ANSWER, "origin": _ANNOUNCER},
                        ],
                    }
                ]
            },
        },
    )
]

SGR_LINES = [
    "Searching the web for 'history'\n",
    "Searching the web for 'jazz'\n",
    "Searching the web for 'music'\n",
    "## Research report\n",
    "Task: Research the history of jazz music\n",
    "- history: 2 sources reviewed\n",
    "- jazz: 2 sources reviewed\n",
    "- music: 2 sources reviewed\n",
    "Conclusion: research on history, jazz, music is complete.\n",
]


_dumps = orjson.dumps


async def list_tasks(request: web.Request) -> web.Response:
    total = len(STORED_TASKS)
    body = {
        "tasks": STORED_TASKS,
        "pagination": {"total_items": total, "total_pages": 1, "current_page": 1, "page_size": 10},
    }
    return web.Response(body=_dumps(body), content_type="application/json")


async def create_task(request: web.Request) -> web.Response:
    data = orjson.loads(await request.read())
    task = {
        "task_id": str(uuid.uuid4()),
        "input": data.get("input"),
        "additional_input": data.get("additional_input", {}),
        "artifacts": [],
    }
    return web.Response(body=_dumps(task), content_type="application/json")


async def streaming_chat(request: web.Request) -> web.StreamResponse:
    orjson.loads(await request.read())
    response = web.StreamResponse(headers={"Content-Type": "application/json"})
    await response.prepare(request)
    for frame in NEURO_SAN_FRAMES:
        await response.write(_dumps(frame) + b"\n")
    await response.write_eof()
    return response


async def chat_completions(request: web.Request) -> web.StreamResponse:
    data = orjson.loads(await request.read())
    model = data.get("model", "sgr_agent")
    agent_id = f"{model}_{uuid.uuid4()}"
    completion = f"chatcmpl-{uuid.uuid4().hex}"
    response = web.StreamResponse(
        headers={
            "Content-Type": "text/event-stream",
            "Cache-Control": "no-cache",
            "Connection": "keep-alive",
            "X-Agent-ID": agent_id,
            "X-Agent-Model": model,
        }
    )
    await response.prepare(request)
    deltas: list[dict[str, Any]] = [{"role": "assistant", "content": f"Agent {agent_id} started\n"}]
    deltas += [{"content": line} for line in SGR_LINES]
    for n, delta in enumerate([*deltas, {}]):
        chunk = {
            "id": completion,
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": agent_id,
            "choices": [{"index": 0, "delta": delta, "finish_reason": "stop" if n == len(deltas) else None}],
        }
        await response.write(b"data: " + _dumps(chunk) + b"\n\n")
    await response.write(b"data: [DONE]\n\n")
    await response.write_eof()
    return response


def create_app() -> web.Application:
    app = web.Application()
    app.router.add_get("/ap/v1/agent/tasks", list_tasks)
    app.router.add_post("/ap/v1/agent/tasks", create_task)
    app.router.add_post("/api/v1/{agent_name}/streaming_chat", streaming_chat)
    app.router.add_post("/v1/chat/completions", chat_completions)
    return app


async def serve(host: str, port: int) -> None:
    runner = web.AppRunner(create_app(), access_log=None)
    await runner.setup()
    heap.settle()  # as the mock does: the ceiling pays no collection the mock does not
    await web.TCPSite(runner, host, port).start()
    stop = stop_on_signals()
    try:
        await stop.wait()
    finally:
        await runner.cleanup()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8100)
    add_loop_argument(parser)
    args = parser.parse_args()
    run(serve(args.host, args.port), args.loop)


if __name__ == "__main__":
    main()
