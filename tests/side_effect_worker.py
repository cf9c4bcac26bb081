"""A toolweave process whose tool has a side effect, for the Q6 crash test.

Run as ``python tests/side_effect_worker.py TARGET LEDGER PROBE PLAN``: it opens
the checkpointer ``TARGET`` (a SQLite path or a ``postgresql://`` URL) and the
callback ledger ``LEDGER`` (a SQLite file), then answers one JSON command per
line on stdin with one JSON line on stdout:

- ``{"op": "drive", "thread": ...}`` moves the thread one stage on: a new thread
  gets the question, a paused one the reply ``kardiológia``, one interrupted
  mid-run (a killed worker) is resumed with ``invoke(None)``; it answers with the
  stored state, ``"stage": "finished"`` once the answer is in.

The tree: ``planner`` splits the question into 1.1 (a callback from cardiology:
recorded at once), 1.2 (a callback with no department: asks which one, then
records) and 1.3 (a plain context tool). ``callback_request`` is the bundled
hospital tool over an instrumented ledger: every attempt to record appends
``"attempt <key>"`` to ``PROBE`` before the insert, ``"effect <key>"`` after the
commit. ``PLAN`` (``"-"`` for none) names a point (``enter:N`` or ``effect:N``):
the N-th time the worker reaches it, it prints ``{"paused": ...}`` and waits, so
the test SIGKILLs it exactly there.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from langchain_core.messages import HumanMessage

from toolweave import (
    AgentCoordinator,
    ChatbotTool,
    TaskInfo,
    ToolCallContext,
    ToolResult,
    UniqueTextDocument,
    build_graph,
    reply,
)
from toolweave.persistence import open_checkpointer
from toolweave.testing import FunctionAssistant
from toolweave_korhaz import CallbackLedger, CallbackRecord, CallbackRequestTool

QUESTION = "Please arrange my callbacks"
REPLY = "kardiológia"
PHONE = "+36 30 123 4567"
SUBTASKS = (
    ("1.1", "Kérem, hívjon vissza a kardiológia.", "callback_request"),
    ("1.2", "Kérem, hívjanak vissza.", "callback_request"),
    ("1.3", "Where can I park?", "parking"),
)
PAUSE_S = 0.05
"""Time spent inside the tool around the side effect, so timed kills land there too."""


class Planner(ChatbotTool[Any], AgentCoordinator):
    name = "planner"
    priority = 10

    def decompose_into_subtasks(self, task: TaskInfo) -> TaskInfo:
        if task.task_no == "1" and task.task_prompt == QUESTION:
            task.sub_tasks = [
                TaskInfo(task_no=no, task_prompt=prompt, required_tool_names=[tool])
                for no, prompt, tool in SUBTASKS
            ]
        return task


class Parking(ChatbotTool[Any]):
    name = "parking"

    def execute(self, request: Any, ctx: ToolCallContext) -> ToolResult:
        doc = UniqueTextDocument(document_id="parking", page=1, sentence_number=1, text="P2 deck")
        return ToolResult.as_context(self.name, [doc])


class ProbedLedger(CallbackLedger):
    """A callback ledger that reports every attempt and can stop at a planned point."""

    def __init__(self, path: str, probe: str, plan: str) -> None:
        super().__init__(path)
        self.probe = Path(probe)
        point, _, nth = plan.partition(":")
        self.plan = (point, int(nth)) if nth else None
        self.reached: dict[str, int] = {}

    def _point(self, point: str, key: str) -> None:
        with self.probe.open("a", encoding="utf-8") as out:
            out.write(f"{point} {key}\n")
        self.reached[point] = self.reached.get(point, 0) + 1
        if self.plan == (point, self.reached[point]):
            print(json.dumps({"paused": point, "key": key}), flush=True)
            time.sleep(120)  # the test kills the process here
        time.sleep(PAUSE_S)

    def record(self, idempotency_key: str, department: str, phone: str) -> CallbackRecord:
        self._point("attempt", idempotency_key)
        self._point("enter", idempotency_key)
        stored = super().record(idempotency_key, department, phone)
        self._point("effect", idempotency_key)
        return stored


def make_graph(saver: Any, ledger: CallbackLedger) -> Any:
    tools = [Planner(), CallbackRequestTool(ledger), Parking()]
    return build_graph("korhaz", tools, assistant=FunctionAssistant(), checkpointer=saver)


def describe(graph: Any, config: Any) -> dict[str, Any]:
    snapshot = graph.get_state(config)
    values = snapshot.values
    pending = [i.value for i in snapshot.interrupts]
    if not values:
        stage = "new"
    elif pending:
        stage = "waiting"
    elif snapshot.next:
        stage = "interrupted"
    else:
        stage = "finished"
    return {
        "stage": stage,
        "answer": values.get("answer"),
        "activated": list(values.get("activated") or []),
        "buffer": sorted(values.get("context_buffer") or {}),
        "llm_calls": values.get("llm_calls"),
        "pending": pending,
    }


def drive(graph: Any, thread: str) -> dict[str, Any]:
    config = {"configurable": {"thread_id": thread}}
    stage = describe(graph, config)["stage"]
    if stage == "new":
        graph.invoke({"messages": [HumanMessage(QUESTION)], "user_data": {"phone": PHONE}}, config)
    elif stage == "waiting":
        reply(graph, config, REPLY)
    elif stage == "interrupted":
        graph.invoke(None, config)
    return {"pid": os.getpid(), **describe(graph, config)}


def main(argv: list[str]) -> None:
    target, ledger_path, probe, plan = argv[1:5]
    ledger = ProbedLedger(ledger_path, probe, "" if plan == "-" else plan)
    with open_checkpointer(target, env={}) as saver:
        graph = make_graph(saver, ledger)
        print(json.dumps({"ready": os.getpid()}), flush=True)
        for line in sys.stdin:
            if line.strip():
                command = json.loads(line)
                print(json.dumps(drive(graph, command["thread"]), default=str), flush=True)


if __name__ == "__main__":
    main(sys.argv)
