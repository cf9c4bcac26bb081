"""R1-R8: what tools return and how results merge."""

from __future__ import annotations

from typing import Any

from support import Calls, ScriptedCoordinator, ask, doc, graph_of, make_tool

from toolweave import TaskInfo, ToolCallContext, ToolResult
from toolweave.llm.passthrough import split_for_streaming
from toolweave.state.documents import merge_documents
from toolweave.testing import FunctionAssistant


def _answers(calls: list[Any]) -> FunctionAssistant:
    def answer(request: Any) -> str:
        calls.append(request)
        return "LLM:" + "|".join([*request.guaranteed, *(d.text for d in request.documents)])

    return FunctionAssistant(route=lambda text, tools: [t.name for t in tools], answer=answer)


def test_R1_none_result_is_not_activated():
    answered: list[Any] = []
    tools = [
        make_tool("nothing", result=lambda n, c: None, supplement="NOTHING-SUPPLEMENT"),
        make_tool("ctx", supplement="CTX-SUPPLEMENT"),
    ]
    out = ask(graph_of(tools, assistant=_answers(answered)), "q")
    assert out["activated"] == ["1:ctx"]
    assert "1:nothing" not in out["context_buffer"]
    assert out["answer"] == "LLM:ctx says hi"
    # T8: only the supplement of the tool that counts as activated reaches the answer prompt
    assert "CTX-SUPPLEMENT" in answered[0].system_prompt
    assert "NOTHING-SUPPLEMENT" not in answered[0].system_prompt
    # L1: the ledger still says the tool ran and returned nothing
    [entry] = [e for e in out["ledger"] if e.tool == "nothing" and e.kind == "tool_result"]
    assert entry.verdict == "no result (R1)"


def test_R1_R7_raising_tool_is_not_activated_and_adds_no_supplement():
    def boom(name: str, ctx: ToolCallContext) -> ToolResult:
        raise RuntimeError("backend down")

    answered: list[Any] = []
    tools = [make_tool("broken", result=boom, supplement="BROKEN-SUPPLEMENT"), make_tool("ctx")]
    out = ask(graph_of(tools, assistant=_answers(answered)), "q")
    assert out["activated"] == ["1:ctx"]
    assert "BROKEN-SUPPLEMENT" not in answered[0].system_prompt


def test_R2_context_documents_join_the_final_answer_context():
    answered: list[Any] = []
    out = ask(graph_of([make_tool("ctx")], assistant=_answers(answered)), "q")
    assert [d.text for d in answered[0].documents] == ["ctx says hi"]
    assert out["documents"][0].document_id == "ctx-doc"


def test_R3_as_answer_skips_the_final_llm_call():
    answered: list[Any] = []
    tools = [make_tool("final", result=lambda n, c: ToolResult.as_answer(n, "Call 112."))]
    out = ask(graph_of(tools, assistant=_answers(answered)), "q")
    assert out["answer"] == "Call 112."
    assert answered == []
    assert out["messages"][-1].content == "Call 112."


def test_R4_as_answered_streams_through_the_tool_and_ends_without_llm():
    answered: list[Any] = []

    def result(name: str, ctx: ToolCallContext) -> ToolResult:
        ctx.stream_answer(split_for_streaming("streamed by the tool"))
        return ToolResult.as_answered(name)

    graph = graph_of([make_tool("streamer", result=result)], assistant=_answers(answered))
    tokens = [
        c.content
        for c, meta in graph.stream({"messages": [("human", "q")]}, stream_mode="messages")
        if meta["langgraph_node"] == "execute"
    ]
    assert "".join(tokens) == "streamed by the tool"
    assert len(tokens) > 1
    out = ask(graph, "q", thread_id="again")
    assert out["answer"] == "streamed by the tool"
    assert answered == []


def test_R5_guaranteed_context_reaches_the_answer_even_without_documents():
    answered: list[Any] = []
    tools = [make_tool("sure", result=lambda n, c: ToolResult.as_guaranteed_context(n, "fact"))]
    out = ask(graph_of(tools, assistant=_answers(answered)), "q")
    assert answered[0].guaranteed == ["fact"]
    assert out["answer"] == "LLM:fact"


def test_R6_same_sentence_from_two_tools_appears_once_with_higher_score():
    low, high = doc("d", "same", score=0.2), doc("d", "same", score=0.9)
    assert merge_documents([low], [high]) == [high]
    assert merge_documents([high], [low]) == [high]
    other_page = doc("d", "same", page=2)
    assert len(merge_documents([low], [other_page])) == 2

    answered: list[Any] = []
    tools = [
        make_tool("a", result=lambda n, c: ToolResult.as_context(n, [low])),
        make_tool("b", result=lambda n, c: ToolResult.as_context(n, [high])),
    ]
    ask(graph_of(tools, assistant=_answers(answered)), "q")
    assert [(d.text, d.sentence_score) for d in answered[0].documents] == [("same", 0.9)]


def test_R7_raising_tool_is_none_logged_reported_and_the_run_goes_on():
    def boom(name: str, ctx: ToolCallContext) -> ToolResult:
        raise RuntimeError("backend down")

    calls: Calls = []
    tools = [make_tool("broken", result=boom, priority=1), make_tool("ok", calls=calls)]
    graph = graph_of(tools, assistant=_answers([]))
    events = [d for m, d in graph.stream({"messages": [("human", "q")]}, stream_mode=["custom"])]
    assert {"TOOL_PROGRESS:BROKEN:ERROR"} <= {e.get("text") for e in events}
    calls.clear()
    out = ask(graph, "q", thread_id="x")
    assert calls == [("1", "ok")]
    assert out["answer"] == "LLM:ok says hi"
    failed = [e for e in out["ledger"] if e.kind == "tool_error"]
    assert failed[0].tool == "broken"
    assert "RuntimeError" in failed[0].reason


def test_R8_ascending_priority_first_terminal_stops_later_tools_context_merges():
    calls: Calls = []
    tools = [
        make_tool("late", calls=calls, priority=30),
        make_tool(
            "stop", calls=calls, priority=20, result=lambda n, c: ToolResult.as_answer(n, "stopped")
        ),
        make_tool("early", calls=calls, priority=10),
        make_tool(
            "sure",
            calls=calls,
            priority=5,
            result=lambda n, c: ToolResult.as_guaranteed_context(n, "kept"),
        ),
    ]
    out = ask(graph_of(tools, assistant=_answers([])), "q")
    assert calls == [("1", "sure"), ("1", "early"), ("1", "stop")]
    assert out["answer"] == "stopped"
    assert [g.context for g in out["guaranteed"]] == ["kept"]
    assert set(out["context_buffer"]) == {"1:sure", "1:early", "1:stop"}


def test_R5_identical_guaranteed_texts_of_two_subtasks_both_reach_the_answer():
    def decompose(task: TaskInfo) -> TaskInfo:
        if task.task_no == "1":
            task.sub_tasks = [
                TaskInfo(task_no="1.1", task_prompt="Pharmacy side?", required_tool_names=["side"]),
                TaskInfo(task_no="1.2", task_prompt="Lab side?", required_tool_names=["side"]),
            ]
        return task

    answered: list[Any] = []
    tools = [
        ScriptedCoordinator("sides", decompose),
        make_tool(
            "side", routing=None, result=lambda n, c: ToolResult.as_guaranteed_context(n, "Left")
        ),
    ]
    out = ask(graph_of(tools, assistant=_answers(answered)), "Which side are they on?")
    assert answered[0].guaranteed == ["Left", "Left"]
    # each kept with the subtask it answers (its execution text ends with the subtask prompt)
    assert [
        g.prompt.endswith(p)
        for g, p in zip(out["guaranteed"], ["Pharmacy side?", "Lab side?"], strict=True)
    ] == [True, True]
