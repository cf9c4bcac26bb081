"""R9 per turn: each answer's message in the thread carries that answer's own sources."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessage
from langgraph.checkpoint.memory import InMemorySaver

from tests.support import ask, doc, graph_of, make_tool
from toolweave import OfflineAssistant, ToolResult, checkpoint_serde
from toolweave.state.documents import MESSAGE_SOURCES_KEY, Source

CONTEXT = [
    doc("pharmacy", "The pharmacy opens at 8:00 on weekdays."),
    doc("parking", "Parking costs 500 Ft an hour.", page=3),
]


def _graph(**kwargs: Any) -> Any:
    search = make_tool("search", result=lambda n, ctx: ToolResult.as_context(n, CONTEXT))
    tools = [search, *kwargs.pop("tools", [])]
    return graph_of(
        tools,
        assistant=OfflineAssistant(),
        checkpointer=InMemorySaver(serde=checkpoint_serde()),
        **kwargs,
    )


def _answers(graph: Any, thread_id: str) -> list[AIMessage]:
    state = graph.get_state({"configurable": {"thread_id": thread_id}})
    return [m for m in state.values["messages"] if isinstance(m, AIMessage)]


def _carried(message: AIMessage) -> list[Source]:
    return [Source.model_validate(s) for s in message.response_metadata[MESSAGE_SOURCES_KEY]]


def test_R9_each_answer_message_carries_its_own_sources() -> None:
    graph = _graph()
    first = ask(graph, "search: When does the pharmacy open?", thread_id="two")
    second = ask(graph, "search: How much does parking cost an hour?", thread_id="two")
    assert [s.document_id for s in first["sources"]] == ["pharmacy"]
    assert [s.document_id for s in second["sources"]] == ["parking"]
    one, two = _answers(graph, "two")
    assert _carried(one) == first["sources"]  # the first turn keeps its own, not the last
    assert (
        _carried(two)
        == second["sources"]
        == graph.get_state({"configurable": {"thread_id": "two"}}).values["sources"]
    )
    assert _carried(two)[0].pages == (3,)


def test_R9_a_finished_answers_message_carries_the_tools_sources() -> None:
    done = make_tool(
        "done",
        result=lambda n, ctx: ToolResult.as_answer(n, "Booked.", sources=[CONTEXT[1]]),
    )
    graph = _graph(tools=[done])
    out = ask(graph, "done: book a parking place", thread_id="fin")
    (message,) = _answers(graph, "fin")
    assert _carried(message) == out["sources"] != []


def test_R9_an_answer_resting_on_no_source_carries_an_empty_list() -> None:
    graph = graph_of(
        [], assistant=OfflineAssistant(), checkpointer=InMemorySaver(serde=checkpoint_serde())
    )
    ask(graph, "What is the weather on Mars?", thread_id="none")
    (message,) = _answers(graph, "none")
    assert message.response_metadata[MESSAGE_SOURCES_KEY] == []
