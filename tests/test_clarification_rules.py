"""Q1-Q4, B3: clarification rounds pause the whole tree and resume it from the checkpoint."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command
from support import Calls, ScriptedCoordinator, graph_of, make_tool

from toolweave import (
    ClarifiableContextConsumerTool,
    ClarifiableTool,
    InvalidToolResultError,
    PriorContext,
    TaskInfo,
    ToolCallContext,
    ToolResult,
    ToolweaveError,
)


class Department(ClarifiableTool[Any]):
    """Asks which department until it gets one it knows."""

    name = "department_info"
    executable_instruction = "department_info: true for department questions"

    def __init__(self, calls: list[str], *, asks: int = 1) -> None:
        self.calls = calls
        self.asks = asks

    def execute(self, request: Any, ctx: ToolCallContext) -> ToolResult:
        self.calls.append(f"execute@{ctx.task_no}")
        return ToolResult.clarification(self.name, "Which department?", ["cardiology", "surgery"])

    def execute_with_clarification(
        self, request: Any, ctx: ToolCallContext, reply: str
    ) -> ToolResult:
        self.calls.append(f"reply:{reply}@{ctx.task_no}")
        if len([c for c in self.calls if c.startswith("reply")]) < self.asks:
            return ToolResult.clarification(self.name, "Which one, again?")
        return ToolResult.as_guaranteed_context(self.name, f"{reply}: 8-16h")


def _config(thread: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread}}


def _start(graph: Any, thread: str, text: str = "When are consultation hours?") -> Any:
    return graph.invoke({"messages": [HumanMessage(text)]}, _config(thread))


def test_Q1_tool_question_pauses_the_run_with_a_documented_payload():
    calls: list[str] = []
    graph = graph_of([Department(calls)], checkpointer=InMemorySaver())
    out = _start(graph, "q1", "department_info please")
    (pending,) = out["__interrupt__"]
    assert pending.value == {
        "type": "clarification",
        "question": "Which department?",
        "choices": ["cardiology", "surgery"],
        "tool": "department_info",
        "task_no": "1",
    }
    state = graph.get_state(_config("q1"))
    assert state.next == ("ask_user",)
    assert state.values["tasks"]["1"].queue == ["department_info"]
    assert out["messages"][-1].content == "Which department?"


def test_Q2_resume_command_continues_the_same_tool_with_the_reply():
    calls: list[str] = []
    graph = graph_of([Department(calls)], checkpointer=InMemorySaver())
    _start(graph, "q2", "department_info please")
    out = graph.invoke(Command(resume="cardiology"), _config("q2"))
    assert calls == ["execute@1", "reply:cardiology@1"]
    assert out["answer"] == "cardiology: 8-16h"
    assert out["activated"] == ["1:department_info"]


def test_Q2_next_message_on_the_thread_is_the_reply():
    calls: list[str] = []
    graph = graph_of([Department(calls)], checkpointer=InMemorySaver())
    _start(graph, "q2m", "department_info please")
    out = graph.invoke({"messages": [HumanMessage("surgery")]}, _config("q2m"))
    assert calls == ["execute@1", "reply:surgery@1"]
    assert out["answer"] == "surgery: 8-16h"
    assert out["task"].task_prompt == "department_info please"


def test_Q2_rounds_are_bounded_and_end_with_a_clear_message():
    calls: list[str] = []
    graph = graph_of(
        [Department(calls, asks=99)], checkpointer=InMemorySaver(), max_clarification_rounds=2
    )
    out = _start(graph, "lim", "department_info please")
    out = graph.invoke(Command(resume="a"), _config("lim"))
    assert "__interrupt__" in out
    out = graph.invoke(Command(resume="b"), _config("lim"))
    assert "__interrupt__" not in out
    assert "too many questions" in out["answer"]


def test_Q4_S3_nothing_runs_twice_across_three_rounds():
    calls: Calls = []
    coordinator_calls: list[str] = []
    dept_calls: list[str] = []

    def decompose(task: TaskInfo) -> TaskInfo:
        if task.task_no == "1":
            task.sub_tasks = [
                TaskInfo(task_no="", task_prompt=p, required_tool_names=[t])
                for p, t in (("a", "first"), ("b", "department_info"), ("c", "third"))
            ]
        return task

    tools = [
        ScriptedCoordinator("c", decompose, calls=coordinator_calls),
        make_tool("first", calls=calls),
        Department(dept_calls, asks=2),
        make_tool("third", calls=calls),
    ]
    graph = graph_of(tools, checkpointer=InMemorySaver())
    _start(graph, "q4", "plan")
    assert calls == [("1.1", "first")]  # S3: the walk stopped at 1.2
    graph.invoke(Command(resume="x"), _config("q4"))
    out = graph.invoke({"messages": [HumanMessage("y")]}, _config("q4"))
    assert coordinator_calls == ["c@1"]
    assert calls == [("1.1", "first"), ("1.3", "third")]
    assert dept_calls == ["execute@1.2", "reply:x@1.2", "reply:y@1.2"]
    assert out["activated"] == ["1.1:first", "1.2:department_info", "1.3:third"]
    # normalize, one extraction per forced tool with fields (first, third) and the answer:
    # the resumed rounds repeated none of them, and the root made no routing call, its
    # candidates having all run on its subtasks (S5)
    assert out["llm_calls"] == 4


def test_B3_clarifiable_consumer_gets_prior_context_again_on_the_reply():
    seen: list[list[str]] = []

    class Consumer(ClarifiableContextConsumerTool[Any]):
        name = "consumer"

        def execute_with_prior_context(
            self, request: Any, ctx: ToolCallContext, prior_context: PriorContext
        ) -> ToolResult:
            seen.append(sorted(prior_context))
            return ToolResult.clarification(self.name, "Which?")

        def execute_with_clarification_and_prior_context(
            self, request: Any, ctx: ToolCallContext, reply: str, prior_context: PriorContext
        ) -> ToolResult:
            seen.append(sorted(prior_context))
            return ToolResult.as_answer(self.name, f"{reply} with {sorted(prior_context)}")

    def decompose(task: TaskInfo) -> TaskInfo:
        if task.task_no == "1":
            task.sub_tasks = [TaskInfo(task_no="", task_prompt="s", required_tool_names=["a"])]
            task.required_tool_names = ["consumer"]
        return task

    graph = graph_of(
        [ScriptedCoordinator("c", decompose), make_tool("a"), Consumer()],
        checkpointer=InMemorySaver(),
    )
    _start(graph, "b3", "q")
    out = graph.invoke(Command(resume="this"), _config("b3"))
    assert seen == [["1.1:a"], ["1.1:a"]]
    assert out["answer"] == "this with ['1.1:a']"


def test_X1_reply_to_unknown_thread_or_nothing_pending_is_a_clear_error_and_stores_nothing():
    import pytest

    from toolweave import NothingPendingError, UnknownThreadError, pending_clarification, reply

    saver = InMemorySaver()
    calls: list[str] = []
    graph = graph_of([Department(calls), make_tool("plain")], checkpointer=saver)
    with pytest.raises(UnknownThreadError):
        reply(graph, _config("nobody"), "cardiology")
    assert saver.get_tuple(_config("nobody")) is None

    graph.invoke({"messages": [HumanMessage("plain")]}, _config("done"))
    before = saver.get_tuple(_config("done")).checkpoint["id"]
    with pytest.raises(NothingPendingError):
        reply(graph, _config("done"), "cardiology")
    assert saver.get_tuple(_config("done")).checkpoint["id"] == before

    _start(graph, "open", "department_info please")
    assert pending_clarification(graph, _config("open"))["tool"] == "department_info"
    out = reply(graph, _config("open"), {"reply": "surgery"})
    assert out["answer"] == "surgery: 8-16h"
    assert pending_clarification(graph, _config("open")) is None


def test_Q2_a_numbered_reply_becomes_the_offered_choice():
    calls: list[str] = []
    graph = graph_of([Department(calls)], checkpointer=InMemorySaver())
    _start(graph, "num", "department_info please")
    out = graph.invoke(Command(resume="2"), _config("num"))
    assert calls[-1] == "reply:surgery@1"
    assert out["messages"][-2].content == "surgery"  # the history says what was picked
    _start(graph, "num2", "department_info please")
    out = graph.invoke({"messages": [HumanMessage("1.")]}, _config("num2"))
    assert calls[-1] == "reply:cardiology@1"
    assert out["answer"] == "cardiology: 8-16h"


class ReadmeStyleAsker(ClarifiableTool[Any]):
    """Builds the clarification the way the README once showed it (no tool name first)."""

    name = "asker"
    executable_instruction = "asker: true always"

    def __init__(self, build: Any) -> None:
        self.build = build

    def execute(self, request: Any, ctx: ToolCallContext) -> ToolResult:
        return self.build(self.name)  # type: ignore[no-any-return]

    def execute_with_clarification(
        self, request: Any, ctx: ToolCallContext, reply: str
    ) -> ToolResult:
        return ToolResult.as_context(self.name, [])


@pytest.mark.parametrize(
    ("build", "problem"),
    [
        (lambda n: ToolResult.clarification("Which department?", ["cardiology"]), "tool_name"),
        (lambda n: ToolResult.clarification("Which department?", "Pick one"), "tool_name"),
        (lambda n: ToolResult.clarification(n, ""), "question"),
        (lambda n: ToolResult.clarification(n, "Which?", "cardiology"), "choices"),
        (lambda n: ToolResult.clarification(n, "Which?", ["a", 2]), "choice"),
        (lambda n: "Which department?", "returned str"),
    ],
)
def test_Q1_clarification_with_bad_arguments_fails_loudly_not_as_no_result(build, problem):
    graph = graph_of([ReadmeStyleAsker(build)], checkpointer=InMemorySaver())
    with pytest.raises(InvalidToolResultError, match=problem):
        _start(graph, "bad", "asker please")
    assert issubclass(InvalidToolResultError, ToolweaveError)


def test_Q1_readme_clarification_example_matches_the_signature():
    root = Path(__file__).parents[1]
    pages = [root / "README.md", *sorted((root / "docs").rglob("*.md"))]
    text = " ".join(p.read_text(encoding="utf-8") for p in pages if p.is_file())
    calls = re.findall(r"ToolResult\.clarification\(([^)]*)\)", text.replace("\n", " "))
    assert calls
    for args in calls:
        assert args.split(",")[0].strip() == "self.name", args
    result = ToolResult.clarification("department_info", "Which department?", ["a", "b"])
    assert (result.text, result.choices) == ("Which department?", ("a", "b"))
