"""R9, P2: a sentence about another subject than the one asked is not kept beside the answer.

Issue 38: small models answer "is the surgery open on Tuesday?" with the surgery's hours *and*
another office's Tuesday hours; each sentence is supported by the passage it cites, so the
citation check alone keeps both. A sentence (a figure or not) is dropped when neither it
nor the passages it cites say a word of what the question asks about (a weekday says when,
not what), while another kept sentence does and cites other passages. Alone, or resting on a
passage an on-subject sentence cites, it stays. The same on the streamed path (nothing of it
is shown) and the unstreamed one.
"""

from __future__ import annotations

import asyncio
from typing import Any

from langchain_core.messages import HumanMessage

from tests.support import doc, graph_of, make_tool
from tests.test_r9_p2_cited_stream import StreamingAssistant
from tests.test_r9_verified_citations import ConstrainedAssistant
from toolweave import ToolResult
from toolweave.llm import answer_rules

CONTEXT = [
    doc("Patient office", "Her office hours are every Tuesday 10:00-12:00 in room 105."),
    doc("Surgery", "On Tuesday the consultation hours of Surgery are 10:00-14:00."),
    doc("Surgery", "The Surgery clinic is on floor 2.", sentence=2),
]
QUESTION = "Is the surgery clinic open on Tuesday?"
STRAY = ("Her office hours are every Tuesday 10:00-12:00.", [1])
ASKED = ("On Tuesday the surgery consultation hours are 10:00-14:00.", [2])


def _reply(*pairs: tuple[str, list[int]]) -> dict[str, Any]:
    return {"sentences": [{"text": text, "sources": ids} for text, ids in pairs]}


def _graph(assistant: Any) -> Any:
    tool = make_tool("search", result=lambda n, ctx: ToolResult.as_context(n, CONTEXT))
    return graph_of([tool], assistant=assistant)


def _unstreamed(reply: dict[str, Any]) -> dict[str, Any]:
    graph = _graph(ConstrainedAssistant(reply))
    return graph.invoke({"messages": [HumanMessage(QUESTION)]}, {})  # type: ignore[no-any-return]


def _streamed(reply: dict[str, Any], *, use_async: bool) -> tuple[dict[str, Any], str]:
    graph = _graph(StreamingAssistant((reply, "stop")))
    inputs = {"messages": [HumanMessage(QUESTION)]}
    if use_async:

        async def collect() -> list[Any]:
            return [e async for e in graph.astream(inputs, {}, stream_mode=["messages", "values"])]

        events = asyncio.run(collect())
    else:
        events = list(graph.stream(inputs, {}, stream_mode=["messages", "values"]))
    final = [data for mode, data in events if mode == "values"][-1]
    shown = "".join(
        data[0].text
        for mode, data in events
        if mode == "messages" and data[1].get("langgraph_node") == "answer"
    )
    return final, shown


def test_R9_a_figure_of_another_subject_is_dropped_where_the_answer_says_what_was_asked() -> None:
    out = _unstreamed(_reply(STRAY, ASKED))
    assert out["answer"] == ASKED[0]
    assert [s.supported for s in out["answer_sentences"]] == [False, True]
    (entry,) = [e for e in out["ledger"] if e.kind == "answer"]
    assert "Her office hours" in entry.reason  # the ledger names what was dropped


def test_R9_P2_a_stray_figure_is_never_shown_while_the_answer_streams() -> None:
    for use_async in (False, True):
        final, shown = _streamed(_reply(STRAY, ASKED), use_async=use_async)
        assert final["answer"] == ASKED[0]
        assert "10:00-12:00" not in shown
        assert "10:00-14:00" in shown


def test_R9_a_stray_figure_alone_is_kept_the_check_has_nothing_to_prefer() -> None:
    out = _unstreamed(_reply(STRAY))
    assert out["answer"] == STRAY[0]


def test_R9_a_next_sentence_on_the_passage_of_an_on_subject_one_is_kept() -> None:
    next_one = ("It is on floor 2.", [2, 3])  # no word of the question; its passages say one
    out = _unstreamed(_reply(ASKED, next_one))
    assert out["answer"] == f"{ASKED[0]}\n{next_one[0]}"


def test_R9_a_weekday_is_not_what_a_question_is_about() -> None:
    assert answer_rules.asked_subject(QUESTION) == ("surgery", "clinic", "open")
    assert answer_rules.asked_subject("Hétfőn mikor van rendelés?") == ("rendelés",)


def test_R9_a_sentence_of_another_page_naming_nothing_asked_is_dropped_beside_the_answer() -> None:
    """Fixed (dev k134): the CT booking number came after four sentences on patients' rights."""
    rights = doc("Patient rights", "Every patient has the right to respect for their dignity.")
    tool = make_tool("search", result=lambda n, ctx: ToolResult.as_context(n, [*CONTEXT, rights]))
    said = (rights.text, [4])
    graph = graph_of([tool], assistant=ConstrainedAssistant(_reply(said, ASKED)))
    out = graph.invoke({"messages": [HumanMessage(QUESTION)]}, {})
    assert out["answer"] == ASKED[0]
    assert [s.supported for s in out["answer_sentences"]] == [False, True]
    alone = graph_of([tool], assistant=ConstrainedAssistant(_reply(said)))
    assert alone.invoke({"messages": [HumanMessage(QUESTION)]}, {})["answer"] == rights.text
