"""A process embedding the compiled graph over a shared checkpointer, for the S5/Q6 lock tests.

Run as ``python tests/thread_lock_worker.py TARGET EFFECTS HOLD_S WAIT_S MODE``: it
opens the checkpointer ``TARGET`` (a ``postgresql://`` URL or a SQLite path; with
``open_async_checkpointer`` when ``MODE`` is ``async``) and builds a helpdesk graph
whose one tool, ``open_ticket``, has a side effect: it appends ``"<pid> <idempotency
key>"`` to ``EFFECTS`` (opened, appended, closed), then stays in the tool for
``HOLD_S`` seconds, so that a run on the thread lasts. The graph's
``Limits.thread_wait_s`` is ``WAIT_S``. It reads one JSON command per line on stdin
(``{"op": ..., "thread": ..., "text": ...}``) and answers each with one JSON line:

- ``send``: ``invoke`` (``ainvoke`` in async mode) the question as a message with the
  id ``text`` (a client's message id: the same message sent twice carries it twice);
  answers ``{"answer": ...}`` or ``{"error": <error class>}``, with ``"seconds"``;
- ``state``: the thread's stored messages (``[type, id]``) and checkpoint count.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from pathlib import Path
from typing import Any, ClassVar

from langchain_core.messages import HumanMessage

from toolweave import (
    ChatbotTool,
    EmptyRequest,
    Limits,
    ToolCallContext,
    ToolResult,
    ToolweaveError,
    build_graph,
)
from toolweave.persistence import open_async_checkpointer, open_checkpointer
from toolweave.testing import FunctionAssistant

QUESTION = "Please open a ticket: the printer on floor 2 is jammed."


class OpenTicket(ChatbotTool[EmptyRequest]):
    """Opens a helpdesk ticket: one per call, no deduplication by key."""

    name = "open_ticket"
    domain = "desk"
    side_effects: ClassVar[bool] = True
    executable_instruction = "open_ticket: true when the user asks to open a ticket"

    def __init__(self, effects: Path, hold_s: float) -> None:
        self.effects = effects
        self.hold_s = hold_s

    def execute(self, request: EmptyRequest, ctx: ToolCallContext) -> ToolResult:
        with self.effects.open("a", encoding="utf-8") as out:
            out.write(f"{os.getpid()} {ctx.idempotency_key}\n")
        time.sleep(self.hold_s)
        return ToolResult.as_guaranteed_context(self.name, f"Ticket by {os.getpid()} opened.")


def make_graph(saver: Any, effects: Path, hold_s: float, wait_s: float) -> Any:
    ticket = OpenTicket(effects, hold_s)
    assistant = FunctionAssistant(route=lambda text, tools: [ticket.name])
    return build_graph(
        "desk",
        [ticket],
        assistant=assistant,
        checkpointer=saver,
        limits=Limits(thread_wait_s=wait_s),
    )


def describe(values: dict[str, Any], checkpoints: int) -> dict[str, Any]:
    messages = [[m.type, m.id] for m in values.get("messages", [])]
    return {"messages": messages, "checkpoints": checkpoints}


def run(graph: Any, command: dict[str, str]) -> dict[str, Any]:
    config = {"configurable": {"thread_id": command["thread"]}}
    if command["op"] == "state":
        history = list(graph.get_state_history(config))
        return describe(graph.get_state(config).values, len(history))
    started = time.monotonic()
    try:
        out = graph.invoke({"messages": [HumanMessage(QUESTION, id=command["text"])]}, config)
    except ToolweaveError as exc:
        return {"error": type(exc).__name__, "seconds": time.monotonic() - started}
    return {"answer": out.get("answer"), "seconds": time.monotonic() - started}


async def arun(graph: Any, command: dict[str, str]) -> dict[str, Any]:
    config = {"configurable": {"thread_id": command["thread"]}}
    if command["op"] == "state":
        history = [s async for s in graph.aget_state_history(config)]
        return describe((await graph.aget_state(config)).values, len(history))
    message = HumanMessage(QUESTION, id=command["text"])
    started = time.monotonic()
    try:
        out = await graph.ainvoke({"messages": [message]}, config)
    except ToolweaveError as exc:
        return {"error": type(exc).__name__, "seconds": time.monotonic() - started}
    return {"answer": out.get("answer"), "seconds": time.monotonic() - started}


def main(argv: list[str]) -> None:
    target, effects, hold_s, wait_s = argv[1:5]
    with open_checkpointer(target, env={}) as saver:
        graph = make_graph(saver, Path(effects), float(hold_s), float(wait_s))
        print(json.dumps({"ready": os.getpid()}), flush=True)
        for line in sys.stdin:
            if line.strip():
                print(json.dumps(run(graph, json.loads(line)), default=str), flush=True)


async def amain(argv: list[str]) -> None:
    target, effects, hold_s, wait_s = argv[1:5]
    loop = asyncio.get_running_loop()
    async with open_async_checkpointer(target, env={}) as saver:
        graph = make_graph(saver, Path(effects), float(hold_s), float(wait_s))
        print(json.dumps({"ready": os.getpid()}), flush=True)
        while line := await loop.run_in_executor(None, sys.stdin.readline):
            if line.strip():
                print(json.dumps(await arun(graph, json.loads(line)), default=str), flush=True)


if __name__ == "__main__":
    if sys.argv[5:] == ["async"]:
        asyncio.run(amain(sys.argv))
    else:
        main(sys.argv)
