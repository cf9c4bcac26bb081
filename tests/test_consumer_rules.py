"""B1-B5: the context buffer and context consumers."""

from __future__ import annotations

from typing import Any

import pytest
from support import RecordingConsumer, ScriptedCoordinator, ask, graph_of, make_tool

from toolweave import (
    AgentCoordinator,
    ContextConsumerTool,
    PriorContext,
    TaskInfo,
    ToolCallContext,
    ToolResult,
)
from toolweave.testing import FunctionAssistant


def test_B1_every_result_is_recorded_with_its_execution_text():
    out = ask(
        graph_of([make_tool("a")], assistant=FunctionAssistant(route=lambda t, ts: ["a"])),
        "the question",
    )
    entry = out["context_buffer"]["1:a"][0]
    assert (entry.prompt, entry.context) == ("the question", "a says hi")
    assert entry.documents[0].document_id == "a-doc"


def test_B2_consumer_gets_a_snapshot_and_plain_execute_raises():
    consumer = RecordingConsumer()
    with pytest.raises(NotImplementedError, match="B2"):
        consumer.execute(None, None)  # type: ignore[arg-type]

    class Mutating(ContextConsumerTool[Any]):
        name = "mutating"
        priority = 1

        def execute_with_prior_context(
            self, request: Any, ctx: ToolCallContext, prior_context: PriorContext
        ) -> ToolResult | None:
            prior_context["1:a"].clear()  # type: ignore[attr-defined]
            return None

    def decompose(task: TaskInfo) -> TaskInfo:
        if task.task_no == "1":
            task.sub_tasks = [TaskInfo(task_no="", task_prompt="s", required_tool_names=["a"])]
            task.required_tool_names = ["mutating", "consumer"]
        return task

    tools = [ScriptedCoordinator("c", decompose), make_tool("a"), Mutating(), consumer]
    tools[-1].priority = 2  # type: ignore[misc]
    out = ask(graph_of(tools), "q")
    assert consumer.seen == [{"1.1:a": ["a says hi"]}]
    assert out["context_buffer"]["1.1:a"][0].context == "a says hi"


def test_B4_coordinator_consumes_its_subtasks_results_on_the_parent():
    class Interaction(ContextConsumerTool[Any], AgentCoordinator):
        name = "interaction"

        def decompose_into_subtasks(self, task: TaskInfo) -> TaskInfo:
            task.sub_tasks = [
                TaskInfo(task_no="", task_prompt=s, required_tool_names=["lookup"])
                for s in ("ibuprofen", "warfarin")
            ]
            task.required_tool_names = [self.name]
            return task

        def execute_with_prior_context(
            self, request: Any, ctx: ToolCallContext, prior_context: PriorContext
        ) -> ToolResult | None:
            found = [e.context for k in sorted(prior_context) for e in prior_context[k]]
            return ToolResult.as_answer(self.name, " + ".join(found))

    lookup = make_tool(
        "lookup",
        result=lambda n, c: ToolResult.as_guaranteed_context(n, c.task.task_prompt.upper()),
    )
    out = ask(graph_of([Interaction(), lookup]), "ibuprofen with warfarin?")
    assert out["activated"] == ["1.1:lookup", "1.2:lookup", "1:interaction"]
    assert out["answer"] == "IBUPROFEN + WARFARIN"


def test_B5_tool_may_call_another_tool_directly():
    helper = make_tool("helper", result=lambda n, c: ToolResult.as_answer(n, "from helper"))

    def result(name: str, ctx: ToolCallContext) -> ToolResult | None:
        return helper.execute(helper.request_model(), ctx)

    out = ask(
        graph_of(
            [make_tool("caller", result=result), helper],
            assistant=FunctionAssistant(route=lambda t, ts: ["caller"]),
        ),
        "q",
    )
    assert out["answer"] == "from helper"
    assert out["activated"] == ["1:caller"]
