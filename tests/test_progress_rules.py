"""P1-P3: progress events through the custom stream mode."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import HumanMessage
from support import graph_of, make_tool

from toolweave import EVENT_VERSION, RoutedEvent, ToolCallContext, ToolResult
from toolweave.tools.progress import ProgressEmitter, progress_text


def _progress_tool(event: str = "FETCHING_DATA") -> Any:
    def result(name: str, ctx: ToolCallContext) -> ToolResult:
        ctx.progress(event)
        return ToolResult.as_answer(name, "done")

    return make_tool("department_info", result=result)


def test_P1_client_format_is_upper_cased_tool_name_and_event():
    assert progress_text("department_info", "FETCHING_DATA") == (
        "TOOL_PROGRESS:DEPARTMENT_INFO:FETCHING_DATA"
    )


def test_P2_progress_reaches_custom_stream_and_answer_tokens_messages_stream():
    from toolweave.testing import FunctionAssistant

    graph = graph_of(
        [_progress_tool(), make_tool("ctx")],
        assistant=FunctionAssistant(route=lambda t, tools: ["ctx"]),
    )
    custom: list[Any] = []
    tokens: list[str] = []
    for mode, data in graph.stream(
        {"messages": [HumanMessage("hello there")]}, stream_mode=["custom", "messages"]
    ):
        if mode == "custom":
            custom.append(data)
        else:
            chunk, meta = data
            if meta["langgraph_node"] == "answer":
                tokens.append(chunk.content)
    assert len(tokens) > 1, "the answer must arrive token by token"
    assert "".join(tokens) == "ctx says hi"
    routed: RoutedEvent = {
        "type": "routed",
        "version": EVENT_VERSION,
        "task_no": "1",
        "tools": ["ctx"],
        "refused": [],
        "held": [],
    }
    assert routed in custom

    graph = graph_of(
        [_progress_tool()], assistant=FunctionAssistant(route=lambda t, tools: ["department_info"])
    )
    texts = [
        d["text"]
        for m, d in graph.stream({"messages": [HumanMessage("q")]}, stream_mode=["custom"])
        if "text" in d
    ]
    assert texts == ["TOOL_PROGRESS:DEPARTMENT_INFO:FETCHING_DATA"]


def test_P3_emitter_without_listener_is_a_noop():
    ProgressEmitter("t")("EVENT")


def test_P3_failing_listener_never_fails_the_tool():
    def broken(_: Any) -> None:
        raise OSError("client went away")

    ProgressEmitter("t", broken)("EVENT")

    from toolweave.testing import FunctionAssistant

    graph = graph_of(
        [_progress_tool()], assistant=FunctionAssistant(route=lambda t, tools: ["department_info"])
    )
    out = graph.invoke({"messages": [HumanMessage("q")]})
    assert out["answer"] == "done"
