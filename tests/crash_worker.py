"""A toolweave process serving threads from a durable checkpointer, for the Q3/Q4 tests.

Run as ``python tests/crash_worker.py TARGET CALLS_FILE``: it opens the
checkpointer ``TARGET`` (a SQLite path or a ``postgresql://`` URL), then reads
one JSON command per line on stdin and answers each with one JSON line on
stdout, until stdin closes. The tests kill it with SIGKILL between commands.

Commands (``{"op": ..., "thread": ..., "text": ...}``):

- ``start``: ask ``text`` on a new thread;
- ``reply``: ``toolweave.reply`` with ``text`` (``Command(resume=...)``);
- ``message``: send ``text`` as the next message on the thread;
- ``state``: describe the stored state without running anything.

Every tool and coordinator call appends ``"<pid> <thread> <call>"`` to ``CALLS_FILE``
(opened, appended, closed: the line survives a SIGKILL right after it).

The tree: coordinator ``planner`` splits the root into 1.1 ``parking``
(plain), 1.2 ``department_info`` (asks which department), 1.3 ``doctor_finder``
(a clarifiable consumer: asks which doctor, then reads the prior context) and
1.4 ``pharmacy`` (plain). Any other question gets an answer with no tool.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

from langchain_core.messages import HumanMessage
from langgraph.config import get_config

from toolweave import (
    AgentCoordinator,
    ChatbotTool,
    ClarifiableContextConsumerTool,
    ClarifiableTool,
    PriorContext,
    TaskInfo,
    ToolCallContext,
    ToolResult,
    ToolweaveError,
    UniqueTextDocument,
    build_graph,
    reply,
)
from toolweave.persistence import open_checkpointer
from toolweave.testing import FunctionAssistant

SUBTASKS = (
    ("1.1", "Where can I park?", "parking"),
    ("1.2", "When is the consultation?", "department_info"),
    ("1.3", "Who is the doctor there?", "doctor_finder"),
    ("1.4", "Where is the pharmacy?", "pharmacy"),
)
QUESTION = "Plan my hospital visit"


class Recorder:
    """Appends one line per call to the calls file."""

    def __init__(self, path: str) -> None:
        self.path = Path(path)

    def __call__(self, call: str) -> None:
        thread = get_config()["configurable"]["thread_id"]
        with self.path.open("a", encoding="utf-8") as out:
            out.write(f"{os.getpid()} {thread} {call}\n")


def _doc(name: str, text: str) -> UniqueTextDocument:
    return UniqueTextDocument(
        document_id=f"{name}-doc",
        document_name=name,
        page=1,
        sentence_number=1,
        text=text,
        sentence_score=1.0,
    )


class Planner(ChatbotTool[Any], AgentCoordinator):
    name = "planner"
    priority = 10
    executable_instruction = None

    def __init__(self, record: Recorder) -> None:
        self.record = record

    def decompose_into_subtasks(self, task: TaskInfo) -> TaskInfo:
        self.record(f"coordinator {self.name}@{task.task_no}")
        if task.task_no == "1" and task.task_prompt == QUESTION:
            task.sub_tasks = [
                TaskInfo(task_no=no, task_prompt=prompt, required_tool_names=[tool])
                for no, prompt, tool in SUBTASKS
            ]
        return task


class Plain(ChatbotTool[Any]):
    def __init__(self, name: str, record: Recorder) -> None:
        self.name = name  # type: ignore[misc]
        self.record = record

    def execute(self, request: Any, ctx: ToolCallContext) -> ToolResult:
        self.record(f"tool {self.name}@{ctx.task_no}")
        return ToolResult.as_context(self.name, [_doc(self.name, f"{self.name} info")])


class Department(ClarifiableTool[Any]):
    name = "department_info"

    def __init__(self, record: Recorder) -> None:
        self.record = record

    def execute(self, request: Any, ctx: ToolCallContext) -> ToolResult:
        self.record(f"tool {self.name}@{ctx.task_no}")
        return ToolResult.clarification(self.name, "Which department?", ["cardiology", "surgery"])

    def execute_with_clarification(
        self, request: Any, ctx: ToolCallContext, reply: str
    ) -> ToolResult:
        self.record(f"reply {self.name}@{ctx.task_no}:{reply}")
        return ToolResult.as_guaranteed_context(self.name, f"{reply}: 8-16h")


class DoctorFinder(ClarifiableContextConsumerTool[Any]):
    name = "doctor_finder"

    def __init__(self, record: Recorder) -> None:
        self.record = record

    def execute_with_prior_context(
        self, request: Any, ctx: ToolCallContext, prior_context: PriorContext
    ) -> ToolResult:
        self.record(f"tool {self.name}@{ctx.task_no}:{','.join(sorted(prior_context))}")
        return ToolResult.clarification(self.name, "Which doctor?")

    def execute_with_clarification_and_prior_context(
        self, request: Any, ctx: ToolCallContext, reply: str, prior_context: PriorContext
    ) -> ToolResult:
        keys = ",".join(sorted(prior_context))
        self.record(f"reply {self.name}@{ctx.task_no}:{reply}:{keys}")
        return ToolResult.as_guaranteed_context(self.name, f"{reply} sees you ({keys})")


def make_graph(saver: Any, calls_file: str) -> Any:
    record = Recorder(calls_file)
    tools = [
        Planner(record),
        Plain("parking", record),
        Department(record),
        DoctorFinder(record),
        Plain("pharmacy", record),
    ]
    return build_graph("test", tools, assistant=FunctionAssistant(), checkpointer=saver)


def describe(graph: Any, config: Any) -> dict[str, Any]:
    """The stored state of a thread, as JSON-friendly facts the tests compare."""
    snapshot = graph.get_state(config)
    values = snapshot.values
    tasks = values.get("tasks") or {}
    return {
        "known": bool(values) or snapshot.created_at is not None,
        "checkpoint_id": (snapshot.config.get("configurable") or {}).get("checkpoint_id"),
        "tasks": sorted(tasks),
        "queues": {no: list(node.queue) for no, node in sorted(tasks.items())},
        "applied": {
            no: list(node.task.applied_coordinator_names) for no, node in sorted(tasks.items())
        },
        "buffer": sorted(values.get("context_buffer") or {}),
        "activated": list(values.get("activated") or []),
        "answer": values.get("answer"),
        "llm_calls": values.get("llm_calls"),
        "pending": [i.value for i in snapshot.interrupts],
    }


def run(graph: Any, command: dict[str, Any]) -> dict[str, Any]:
    config = {"configurable": {"thread_id": command["thread"]}}
    op, text = command["op"], command.get("text", "")
    try:
        if op == "start":
            graph.invoke({"messages": [HumanMessage(text)]}, config)
        elif op == "reply":
            reply(graph, config, text)
        elif op == "message":
            graph.invoke({"messages": [HumanMessage(text)]}, config)
        elif op != "state":
            return {"error": "BadCommand", "message": op}
    except ToolweaveError as exc:
        return {"error": type(exc).__name__, "message": str(exc)}
    return {"pid": os.getpid(), **describe(graph, config)}


def main(argv: list[str]) -> None:
    target, calls_file = argv[1], argv[2]
    with open_checkpointer(target, env={}) as saver:
        graph = make_graph(saver, calls_file)
        print(json.dumps({"ready": os.getpid()}), flush=True)
        for line in sys.stdin:
            if line.strip():
                print(json.dumps(run(graph, json.loads(line)), default=str), flush=True)


if __name__ == "__main__":
    main(sys.argv)
