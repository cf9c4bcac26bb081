"""L1: every decision that shaped a run is in the ledger, readable from the checkpoint alone."""

from __future__ import annotations

from typing import Any

from langgraph.checkpoint.memory import InMemorySaver
from support import ScriptedCoordinator, ask, graph_of, make_tool

from toolweave import SubtaskDecision, TaskInfo, ToolCallContext, ToolResult
from toolweave.testing import FunctionAssistant


def test_L1_ledger_explains_every_tool_that_did_or_did_not_run():
    def boom(name: str, ctx: ToolCallContext) -> ToolResult:
        raise RuntimeError("x")

    def decompose(task: TaskInfo) -> TaskInfo:
        if task.task_no == "1":
            task.sub_tasks = [
                TaskInfo(task_no="", task_prompt="f", required_tool_names=["forced", "ghost"]),
                TaskInfo(
                    task_no="", task_prompt="s", required_tool_names=["forced"], conditional=True
                ),
            ]
        return task

    tools = [
        ScriptedCoordinator("coord", decompose, decide=lambda *a: SubtaskDecision.SKIP),
        make_tool("forced", routing=None),
        make_tool("refused", eligible=False),
        make_tool("declined"),
        make_tool("chosen", priority=1),
        make_tool("failing", result=boom),
    ]
    saver = InMemorySaver()
    graph = graph_of(
        tools,
        checkpointer=saver,
        assistant=FunctionAssistant(route=lambda t, ts: ["chosen", "failing"]),
    )
    ask(graph, "q", thread_id="why")
    ledger = graph.get_state({"configurable": {"thread_id": "why"}}).values["ledger"]
    facts = {(e.kind.value, e.task_no, e.tool, e.verdict) for e in ledger}
    assert {
        ("gate", None, "refused", "refused: eligibility"),
        ("coordinator_run", "1", "coord", "changed"),
        ("forced", "1.1", "forced", "forced"),
        ("forced_unknown", "1.1", "ghost", "skipped"),
        ("conditional", "1.2", "coord", "skip"),
        ("routing", "1", "chosen", "routed"),
        ("tool_result", "1", "chosen", "context"),
        ("tool_error", "1", "failing", "failed"),
        ("answer", "1", None, "generated"),
    } <= facts
    assert ledger[0].kind == "normalized"
    declined = next(e for e in ledger if e.kind == "routing" and e.verdict == "declined")
    assert set(declined.details) == {"declined"}  # one summary entry for the declined tools


def test_L1_ledger_is_per_message_not_accumulated_across_turns():
    saver = InMemorySaver()
    graph = graph_of([make_tool("a")], checkpointer=saver)
    first = ask(graph, "a", thread_id="turns")
    second = ask(graph, "a again", thread_id="turns")
    assert len(second["ledger"]) == len(first["ledger"])
    assert second["activated"] == ["1:a"]
    assert len(second["messages"]) == 4

    def count(graph: Any) -> int:
        return len(graph.get_state({"configurable": {"thread_id": "turns"}}).values["messages"])

    assert count(graph) == 4
