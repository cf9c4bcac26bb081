"""L1: every decision that shaped a run is in the ledger, readable from the checkpoint alone."""

from __future__ import annotations

from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from support import ScriptedCoordinator, ask, graph_of, make_tool

from toolweave import (
    InvalidRequestError,
    SubtaskDecision,
    TaskInfo,
    ToolCallContext,
    ToolResult,
    UnknownThreadError,
    explain,
)
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


def _why_graph(saver: Any = None) -> Any:
    def decompose(task: TaskInfo) -> TaskInfo:
        if task.task_no == "1":
            task.sub_tasks = [
                TaskInfo(task_no="", task_prompt="cheap", required_tool_names=["cheap"]),
                TaskInfo(
                    task_no="",
                    task_prompt="costly",
                    required_tool_names=["costly", "audit"],
                    conditional=True,
                ),
            ]
        return task

    tools = [
        ScriptedCoordinator("coord", decompose, decide=lambda *a: SubtaskDecision.SKIP),
        make_tool("cheap", routing=None),
        make_tool("costly", routing=None),
        make_tool("audit", routing=None),
        make_tool("vip", eligible=False),
        make_tool("declined_a"),
        make_tool("declined_b"),
        make_tool("chosen"),
    ]
    route = FunctionAssistant(route=lambda t, ts: ["chosen"])
    return graph_of(tools, assistant=route, checkpointer=saver)


def test_L1_every_entry_about_a_tool_names_it_and_explain_answers_why_it_did_not_run():
    out = ask(_why_graph(), "q")
    declined = next(e for e in out["ledger"] if e.kind == "routing" and e.verdict == "declined")
    assert set(declined.tools) == {"declined_a", "declined_b"}  # named in a field, not in text
    [why_a] = explain(out, tool="declined_a")
    assert (why_a.kind, why_a.task_no, why_a.tool, why_a.verdict) == (
        "routing",
        "1",
        "declined_a",
        "declined",
    )
    assert why_a.reason == declined.details["declined_a"]
    # a skipped conditional subtask names the tools it would have run
    for name in ("costly", "audit"):
        [skipped] = explain(out, tool=name)
        assert (skipped.kind, skipped.task_no, skipped.verdict) == ("conditional", "1.2", "skip")
        assert skipped.tool == name
        assert skipped.reason.startswith("coord decided")
    assert [(e.kind, e.verdict) for e in explain(out, tool="vip")] == [
        ("gate", "refused: eligibility")
    ]
    assert [(e.kind, e.verdict) for e in explain(out, tool="cheap")] == [
        ("forced", "forced"),
        ("tool_result", "context"),
        ("tool_skipped", "ran below"),  # not routed again on the parent (S5)
    ]
    assert explain(out, tool="never_registered") == []
    assert explain(out) == out["ledger"]


def test_L1_explain_reads_a_thread_from_the_checkpoint():
    graph = _why_graph(InMemorySaver())
    ask(graph, "q", thread_id="why")
    about = explain(graph, "why", tool="costly")
    assert [(e.kind, e.tool) for e in about] == [("conditional", "costly")]
    assert explain(graph, {"configurable": {"thread_id": "why"}}, tool="costly") == about
    assert explain(graph.get_state({"configurable": {"thread_id": "why"}}), tool="costly") == about
    with pytest.raises(UnknownThreadError):
        explain(graph, "nobody")
    with pytest.raises(InvalidRequestError):
        explain(graph)


def test_L1_R8_tools_after_a_finished_answer_are_named_as_not_run():
    tools = [
        make_tool("stop", priority=1, result=lambda n, c: ToolResult.as_answer(n, "done")),
        make_tool("later", priority=2),
    ]
    routes = FunctionAssistant(route=lambda t, ts: ["stop", "later"])
    out = ask(graph_of(tools, assistant=routes), "q")
    routed, why = explain(out, tool="later")
    assert (routed.kind, routed.verdict) == ("routing", "routed")
    assert (why.kind, why.verdict, why.task_no) == ("tool_skipped", "not run", "1")
    assert "R8" in why.reason


def test_L1_refused_subtask_names_its_coordinator_and_tools():
    def deep(task: TaskInfo) -> TaskInfo:
        if task.task_no == "1":
            task.sub_tasks = [
                TaskInfo(task_no="", task_prompt=f"s{i}", required_tool_names=["leaf"])
                for i in range(3)
            ]
        return task

    tools = [ScriptedCoordinator("coord", deep), make_tool("leaf", routing=None)]
    out = ask(graph_of(tools, max_tasks=3), "q")
    [refused] = [e for e in out["ledger"] if e.kind == "subtask_refused"]
    assert (refused.tool, refused.tools) == ("coord", ("leaf",))
    assert ("subtask_refused", "refused") in [
        (e.kind, e.verdict) for e in explain(out, tool="leaf")
    ]
