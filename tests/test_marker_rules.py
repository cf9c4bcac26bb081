"""M2-M6: prompt context and the coordinator marker."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st
from support import ScriptedCoordinator, ask, graph_of, make_tool

from toolweave import (
    AGENT_COORDINATOR_MARKER,
    TaskInfo,
    ToolCallContext,
    ToolResult,
    extract_coordinator_original,
    extract_coordinator_task,
    is_coordinator_requested,
)
from toolweave.state.task import execution_text
from toolweave.testing import FunctionAssistant

no_marker = st.text().filter(lambda s: AGENT_COORDINATOR_MARKER not in s)


@given(context=no_marker, prompt=no_marker)
def test_M3_M5_extract_helpers_are_exact_inverses(context: str, prompt: str):
    text = execution_text(TaskInfo(task_no="1.1", task_prompt=prompt, prompt_context=context))
    assert is_coordinator_requested(text)
    assert extract_coordinator_task(text) == prompt
    assert extract_coordinator_original(text) == context


@given(text=no_marker)
def test_M4_text_without_marker_is_not_coordinator_requested(text: str):
    assert not is_coordinator_requested(text)
    assert execution_text(TaskInfo(task_no="1", task_prompt=text)) == text


@given(
    payload=st.dictionaries(st.text(), st.one_of(st.integers(), st.text())),
    prompt=no_marker,
    inner=no_marker,
)
def test_M5_json_parent_text_and_nesting_round_trip(
    payload: dict[str, Any], prompt: str, inner: str
):
    parent = json.dumps(payload, indent=2) + "\n"
    child = execution_text(TaskInfo(task_no="1.1", task_prompt=prompt, prompt_context=parent))
    grandchild = execution_text(TaskInfo(task_no="1.1.1", task_prompt=inner, prompt_context=child))
    assert extract_coordinator_task(grandchild) == inner
    assert extract_coordinator_original(grandchild) == child
    assert (
        json.loads(extract_coordinator_original(extract_coordinator_original(grandchild)))
        == payload
    )


def test_M1_M2_M3_routing_sees_task_prompt_tools_see_execution_text():
    routed: list[str] = []
    texts: list[str] = []

    def result(name: str, ctx: ToolCallContext) -> ToolResult:
        texts.append(ctx.text)
        return ToolResult.as_guaranteed_context(name, "x")

    def decompose(task: TaskInfo) -> TaskInfo:
        if task.task_no == "1":
            task.sub_tasks = [TaskInfo(task_no="", task_prompt="child prompt")]
        return task

    def route(text: str, tools: Any) -> list[str]:
        routed.append(text)
        return ["leaf" if text == "child prompt" else "top"]

    tools = [
        ScriptedCoordinator("c", decompose),
        make_tool("leaf", result=result),
        make_tool("top", result=result),  # the root's own candidate: leaf ran below (S5)
    ]
    ask(graph_of(tools, assistant=FunctionAssistant(route=route)), '{"order": 42}')
    assert routed == ["child prompt", '{"order": 42}']
    assert texts[0] == '{"order": 42}' + AGENT_COORDINATOR_MARKER + "child prompt"
    assert extract_coordinator_original(texts[0]) == '{"order": 42}'


def test_M6_guaranteed_answers_of_subtasks_reach_the_final_answer():
    answered: list[Any] = []

    def decompose(task: TaskInfo) -> TaskInfo:
        if task.task_no == "1":
            task.sub_tasks = [
                TaskInfo(task_no="", task_prompt=p, required_tool_names=["leaf"])
                for p in ("a", "b")
            ]
        return task

    leaf = make_tool(
        "leaf",
        result=lambda n, c: ToolResult.as_guaranteed_context(
            n, f"answer to {extract_coordinator_task(c.text)}"
        ),
    )
    assistant = FunctionAssistant(answer=lambda r: (answered.append(r), "ok")[1])
    ask(graph_of([ScriptedCoordinator("c", decompose), leaf], assistant=assistant), "q")
    assert answered[0].guaranteed == ["answer to a", "answer to b"]
