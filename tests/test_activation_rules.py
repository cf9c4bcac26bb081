"""A1-A7, T5, T7-T10: the activation flow of one task."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from support import Calls, CityRequest, ask, graph_of, make_tool

from toolweave import (
    Domain,
    InvalidRequestError,
    Normalized,
    TaskInfo,
    ToolCallContext,
    ToolResult,
    build_graph,
)
from toolweave.testing import FunctionAssistant


def test_A1_followup_is_normalized_from_the_thread_history_once_per_message():
    seen: list[tuple[str, list[str]]] = []

    def normalize(message: str, history: Any) -> Normalized:
        seen.append((message, [m.text for m in history]))
        if message.startswith("and"):
            return Normalized(question="visiting hours on Friday?", user_lang="en")
        return Normalized(question=message, user_lang="en")

    graph = graph_of(
        [make_tool("ctx")],
        assistant=FunctionAssistant(normalize=normalize),
        checkpointer=InMemorySaver(),
    )
    ask(graph, "visiting hours on Monday?")
    out = ask(graph, "and on Friday?")
    assert len(seen) == 2
    assert seen[1][0] == "and on Friday?"
    assert seen[1][1][0] == "visiting hours on Monday?"
    assert out["task"].task_prompt == "visiting hours on Friday?"


def test_A1_history_window_is_bounded():
    seen: list[int] = []
    graph = graph_of(
        [],
        assistant=FunctionAssistant(normalize=lambda m, h: (seen.append(len(h)), m)[1]),
        history_messages=2,
    )
    msgs = [HumanMessage(f"m{i}") for i in range(7)]
    graph.invoke({"messages": msgs})
    assert seen == [2]


@pytest.mark.parametrize("text", ["", "   \n\t"])
def test_A1_empty_message_is_a_clear_error(text: str):
    with pytest.raises(InvalidRequestError, match="empty"):
        ask(graph_of([]), text)


def test_A1_oversized_message_is_a_clear_error():
    with pytest.raises(InvalidRequestError, match="limit"):
        ask(graph_of([], max_message_chars=10), "x" * 11)


def test_A2_domain_exclusion_removes_a_tool_from_candidates():
    domain = Domain(name="test", excluded_tools=frozenset({"hidden"}))
    tools = [make_tool("hidden"), make_tool("shown")]
    graph = build_graph(
        domain, tools, assistant=FunctionAssistant(route=lambda t, ts: [x.name for x in ts])
    )
    out = ask(graph, "q")
    assert out["activated"] == ["1:shown"]


def test_A5_default_retrieval_runs_beside_routed_tools_but_is_never_routed():
    routed_over: list[list[str]] = []

    def route(text: str, tools: Any) -> list[str]:
        routed_over.append([t.name for t in tools])
        return ["weather"]

    domain = Domain(name="test", default_retrieval_tool="rag")
    tools = [make_tool("rag", routing=None, priority=50), make_tool("weather", priority=10)]
    out = ask(build_graph(domain, tools, assistant=FunctionAssistant(route=route)), "q")
    assert routed_over == [["weather"]]
    assert out["activated"] == ["1:weather", "1:rag"]


def test_A6_results_recorded_under_task_and_tool_in_priority_order():
    out = ask(
        graph_of(
            [make_tool("b", priority=2), make_tool("a", priority=1)],
            assistant=FunctionAssistant(route=lambda t, ts: ["b", "a"]),
        ),
        "q",
    )
    assert list(out["context_buffer"]) == ["1:a", "1:b"]
    assert out["context_buffer"]["1:a"][0].prompt == "q"


def test_A7_answer_uses_user_lang_and_T8_supplements_of_activated_tools_only():
    requests: list[Any] = []
    assistant = FunctionAssistant(
        normalize=lambda m, h: Normalized(question=m, user_lang="hu"),
        route=lambda t, ts: ["used"],
        answer=lambda r: (requests.append(r), "válasz")[1],
    )
    domain = Domain(name="test", system_prompt="BASE")
    tools = [
        make_tool("used", supplement="USED-SUPPLEMENT"),
        make_tool("unused", supplement="UNUSED-SUPPLEMENT"),
    ]
    out = ask(build_graph(domain, tools, assistant=assistant), "kérdés")
    assert out["answer"] == "válasz"
    assert requests[0].user_lang == "hu"
    assert requests[0].system_prompt == "BASE\n\nUSED-SUPPLEMENT"


def test_T5_one_routing_call_sees_every_candidate_and_never_only_forced_tools():
    calls: list[list[str]] = []

    def route(text: str, tools: Any) -> list[str]:
        calls.append([t.name for t in tools])
        return []

    tools = [make_tool(f"t{i}") for i in range(5)] + [make_tool("forced_only", routing=None)]
    ask(graph_of(tools, assistant=FunctionAssistant(route=route)), "q")
    assert calls == [["t0", "t1", "t2", "t3", "t4"]]


def test_T7_extracted_request_is_validated_into_the_request_model():
    seen: list[Any] = []

    def result(name: str, ctx: ToolCallContext) -> ToolResult:
        return ToolResult.as_answer(name, "ok")

    class Weather(type(make_tool("weather"))):  # type: ignore[misc]
        def execute(self, request: CityRequest, ctx: ToolCallContext) -> ToolResult:
            seen.append(request)
            return ToolResult.as_answer(self.name, request.city or "?")

    assistant = FunctionAssistant(
        route=lambda t, ts: ["weather"], extract=lambda text, tool: {"city": "Pécs"}
    )
    out = ask(graph_of([Weather()], assistant=assistant), "weather in Pécs?")
    assert isinstance(seen[0], CityRequest)
    assert seen[0].city == "Pécs"
    assert out["answer"] == "Pécs"


def test_T7_request_that_does_not_validate_skips_the_tool_with_a_ledger_entry():
    calls: Calls = []
    assistant = FunctionAssistant(
        route=lambda t, ts: ["weather"], extract=lambda text, tool: {"city": ["not", "a", "string"]}
    )
    out = ask(graph_of([make_tool("weather", calls=calls)], assistant=assistant), "q")
    assert calls == []
    assert any(e.kind == "tool_skipped" and e.tool == "weather" for e in out["ledger"])


def test_T9_T10_execute_receives_filter_text_language_words_and_emitters():
    got: list[ToolCallContext] = []

    def result(name: str, ctx: ToolCallContext) -> ToolResult:
        got.append(ctx)
        return ToolResult.as_answer(name, "ok")

    assistant = FunctionAssistant(
        normalize=lambda m, h: Normalized(
            question=m, user_lang="hu", important_words=("kardiológia",)
        ),
        route=lambda t, ts: ["t"],
    )
    from toolweave import ALL

    tool = make_tool("t", result=result, eligible_system=ALL)
    ask(graph_of([tool], assistant=assistant), "kardiológia?", systems=["web"], user_data={"id": 7})
    ctx = got[0]
    assert (ctx.systems, ctx.text, ctx.user_lang, ctx.important_words, ctx.user_data) == (
        ("web",),
        "kardiológia?",
        "hu",
        ("kardiológia",),
        {"id": 7},
    )
    assert isinstance(ctx.task, TaskInfo)
    assert ctx.task_no == "1"
    assert callable(ctx.progress)
    assert callable(ctx.stream_answer)
