"""R9 per turn: each answer's message in the thread carries that answer's own sources."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessage
from langgraph.checkpoint.memory import InMemorySaver

from tests.support import ask, doc, graph_of, make_tool, route_by_name
from toolweave import OfflineAssistant, ToolResult, checkpoint_serde
from toolweave.state.documents import (
    MESSAGE_SENTENCES_KEY,
    MESSAGE_SNIPPETS_KEY,
    MESSAGE_SOURCES_KEY,
    SNIPPET_CHARS,
    AnswerSentence,
    Source,
    as_sentences,
    message_metadata,
    sources_of,
)
from toolweave.testing import FunctionAssistant

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


# -- what the sources are quoted with: an earlier turn shows as it showed when current --

QUOTED = [
    doc("garage", "The garage is at the north gate. An hour of parking costs 500 Ft."),
    doc("desk", "The front desk is in the main hall. It opens at 7:30 on weekdays."),
]


def _answers_in_own_words(request: Any) -> str:
    if "desk" in request.question:
        return "The desk opens at 7:30. [2]"
    return "Parking costs 500 Ft an hour. [1]"


def test_R9_each_answer_message_carries_its_sentences_with_the_quotes_of_their_sources() -> None:
    search = make_tool("search", result=lambda n, ctx: ToolResult.as_context(n, QUOTED))
    graph = graph_of(
        [search],
        assistant=FunctionAssistant(route=route_by_name, answer=_answers_in_own_words),
        checkpointer=InMemorySaver(serde=checkpoint_serde()),
    )
    turns = [
        ask(graph, "search: How much is parking?", thread_id="q"),
        ask(graph, "search: When does the desk open?", thread_id="q"),
    ]
    for out, message in zip(turns, _answers(graph, "q"), strict=True):
        carried = as_sentences(message.response_metadata[MESSAGE_SENTENCES_KEY])
        assert carried == [  # as the state held them when this turn was the last
            s.model_copy(update={"documents": ()}) for s in out["answer_sentences"] if s.supported
        ]
        assert all(s.quotes for s in carried)
        assert {k for s in message.response_metadata[MESSAGE_SENTENCES_KEY] for k in s} == {
            "text",
            "sources",
            "quotes",
        }  # compact: no passage ids, no verdicts
        assert MESSAGE_SNIPPETS_KEY not in message.response_metadata  # every source is cited
    first = as_sentences(_answers(graph, "q")[0].response_metadata[MESSAGE_SENTENCES_KEY])
    assert first[0].quotes == ("An hour of parking costs 500 Ft.",)  # the first turn's own


def test_R9_an_uncited_sources_first_passage_is_carried_shortened() -> None:
    """A source no sentence cites is shown with the first passage of it the run retrieved."""
    long = doc("rules", "Visitors are welcome. " * 20)
    meta = message_metadata(
        sources_of([CONTEXT[0], long]),
        [AnswerSentence(text="It opens at 8:00.", sources=(1,), quotes=(CONTEXT[0].text,))],
        [CONTEXT[0], long, doc("rules", "A later passage.")],
    )
    snippet = meta[MESSAGE_SNIPPETS_KEY]["rules"]
    assert set(meta[MESSAGE_SNIPPETS_KEY]) == {"rules"}  # the cited one is quoted instead
    assert snippet.startswith("Visitors are welcome. Visitors")
    assert len(snippet) == SNIPPET_CHARS
    assert snippet.endswith("…")
    unquoted = message_metadata(sources_of([CONTEXT[0]]), [], [CONTEXT[0]])
    assert MESSAGE_SENTENCES_KEY not in unquoted
    assert unquoted[MESSAGE_SNIPPETS_KEY] == {"pharmacy": CONTEXT[0].text}
