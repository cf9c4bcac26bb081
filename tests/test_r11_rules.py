"""R11 (with R6): nothing a tool returns is dropped silently.

A neutral test domain: a leisure centre whose tool returns its facts the way a
new user writes them first, several documents under one ``document_id`` and no
page or sentence number.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import Any

import pytest
from pydantic import BaseModel
from support import doc, graph_of, make_tool

from toolweave import (
    ChatbotTool,
    ConfigurationError,
    ConflictingDocumentsError,
    InvalidToolResultError,
    OfflineAssistant,
    ToolCallContext,
    ToolResult,
    UniqueTextDocument,
    build_graph,
)
from toolweave.cli.render import ledger_line
from toolweave.graph.execute import record_result
from toolweave.graph.tool_call import Outcome
from toolweave.state.documents import complete_identities, merge_documents, repeated
from toolweave.state.ledger import LedgerKind
from toolweave.state.results import ResultMode

FACTS = (
    "The pool opens at 7 in the morning.",
    "Swimming caps are required in the pool.",
    "Children under ten swim with an adult.",
    "The sauna costs 12 euros per visit.",
)
SAUNA = "How much does the sauna cost?"


class NoRequest(BaseModel):
    """The leisure centre's tool needs nothing from the question."""


def _centre(
    documents: Callable[[], Sequence[UniqueTextDocument]],
) -> ChatbotTool[NoRequest]:
    """A leisure-centre tool with a native sync and async body returning ``documents()``."""

    class Centre(ChatbotTool[NoRequest]):
        name = "leisure_centre"
        domain = "leisure"
        request_model = NoRequest
        executable_instruction = (
            "leisure_centre: true when the user asks about the pool, the sauna or swimming."
        )

        def execute(self, request: NoRequest, ctx: ToolCallContext) -> ToolResult | None:
            return ToolResult.as_context(self.name, documents())

        async def aexecute(self, request: NoRequest, ctx: ToolCallContext) -> ToolResult | None:
            return ToolResult.as_context(self.name, documents())

    return Centre()


def _as_readme_builds_them() -> list[UniqueTextDocument]:
    """Four facts under one id, no page or sentence number (what issue 40 met)."""
    return [UniqueTextDocument(document_id="centre", text=fact) for fact in FACTS]


def _run(tool: ChatbotTool[Any], question: str, *, run_async: bool) -> dict[str, Any]:
    graph = build_graph("leisure", [tool], assistant=OfflineAssistant())
    inputs: dict[str, Any] = {"messages": [("human", question)]}
    if run_async:
        return asyncio.run(graph.ainvoke(inputs))  # type: ignore[no-any-return]
    return graph.invoke(inputs)  # type: ignore[no-any-return]


@pytest.mark.parametrize("run_async", [False, True], ids=["sync", "async"])
def test_R11_four_documents_under_one_id_all_reach_the_context_and_the_answer(
    run_async: bool,
) -> None:
    out = _run(_centre(_as_readme_builds_them), SAUNA, run_async=run_async)
    assert out["activated"] == ["1:leisure_centre"]
    assert [d.text for d in out["documents"]] == list(FACTS)
    assert [d.sentence_number for d in out["documents"]] == [1, 2, 3, 4]  # in the order given
    assert "12 euros" in out["answer"]  # the fourth fact answers
    assert not [e for e in out["ledger"] if e.kind is LedgerKind.DEDUPLICATED]


def test_R11_identity_completion_numbers_in_order_around_given_numbers() -> None:
    given = [
        UniqueTextDocument(document_id="d", text="A"),
        UniqueTextDocument(document_id="d", sentence_number=2, text="C"),
        UniqueTextDocument(document_id="d", text="B"),
        UniqueTextDocument(document_id="d", text="A"),  # the same sentence again
        UniqueTextDocument(document_id="d", page=3, text="on another page"),
        UniqueTextDocument(document_id="other", text="alone"),
    ]
    completed = ToolResult.as_context("t", given).documents
    assert [(d.text, d.page, d.sentence_number) for d in completed] == [
        ("A", None, 1),
        ("C", None, 2),  # a number the tool gave is kept, and not given again
        ("B", None, 3),
        ("A", None, 1),  # a repeated text keeps its first number: R6 removes it
        ("on another page", 3, None),  # no clash: left as the tool gave it
        ("alone", None, None),
    ]
    assert complete_identities("t", completed) is completed  # stable: nothing to do


def test_R11_documents_without_clash_come_back_unchanged() -> None:
    given = [doc("d", "one", sentence=1), doc("d", "two", sentence=2), doc("e", "one")]
    assert complete_identities("t", given) is given


@pytest.mark.parametrize(
    "build",
    [
        lambda docs: ToolResult.as_guaranteed_context("t", docs),
        lambda docs: ToolResult.as_answer("t", "done", sources=docs),
        lambda docs: ToolResult.as_answered("t", sources=docs),
    ],
    ids=["guaranteed", "answer", "answered"],
)
def test_R11_every_result_kind_completes_identities(
    build: Callable[[list[UniqueTextDocument]], ToolResult],
) -> None:
    result = build(_as_readme_builds_them())
    assert [d.sentence_number for d in result.documents] == [1, 2, 3, 4]


def test_R6_R11_same_sentence_twice_in_one_result_is_kept_once_and_counted() -> None:
    twice = [doc("d", "same", score=0.2), doc("d", "other", sentence=2), doc("d", "same")]
    out = graph_of([make_tool("t", result=lambda n, c: ToolResult.as_context(n, twice))]).invoke(
        {"messages": [("human", "t")]}
    )
    assert [(d.text, d.sentence_score) for d in out["documents"]] == [("same", 1.0), ("other", 1.0)]
    [counted] = [e for e in out["ledger"] if e.kind is LedgerKind.DEDUPLICATED]
    assert (counted.tool, counted.task_no, counted.count) == ("t", "1", 1)
    assert "1 of its 3 documents" in counted.reason
    assert ledger_line(counted).startswith("t: documents seen before, 1 removed")


@pytest.mark.parametrize("run_async", [False, True], ids=["sync", "async"])
def test_R6_R11_sentence_another_tool_gave_is_kept_once_and_counted_on_the_second(
    run_async: bool,
) -> None:
    low, high = doc("d", "same", score=0.2), doc("d", "same", score=0.9)
    tools = [
        make_tool("a", priority=1, result=lambda n, c: ToolResult.as_context(n, [low])),
        make_tool(
            "b",
            priority=2,
            result=lambda n, c: ToolResult.as_context(n, [high, doc("d", "new", sentence=2)]),
        ),
    ]
    graph = graph_of(tools)
    inputs: dict[str, Any] = {"messages": [("human", "a b")]}
    out = asyncio.run(graph.ainvoke(inputs)) if run_async else graph.invoke(inputs)
    assert [(d.text, d.sentence_score) for d in out["documents"]] == [("same", 0.9), ("new", 1.0)]
    counted = [e for e in out["ledger"] if e.kind is LedgerKind.DEDUPLICATED]
    assert [(e.tool, e.count) for e in counted] == [("b", 1)]


def test_R11_same_identity_with_another_text_from_another_result_is_kept() -> None:
    """Two results each numbered in their own order: a different text is another sentence."""
    first = complete_identities(
        "a", [doc("d", "one", sentence=None), doc("d", "two", sentence=None)]
    )
    second = complete_identities(
        "b", [doc("d", "one", sentence=None), doc("d", "three", sentence=None)]
    )
    assert [d.key for d in second] == [d.key for d in first]  # ("d", 1, 1), ("d", 1, 2)
    merged = merge_documents(first, second)
    assert [d.text for d in merged] == ["one", "two", "three"]
    assert repeated(first, second) == 1  # "one", given by both, is the only one removed


def test_R11_two_tools_numbering_one_document_each_in_its_own_order_lose_nothing() -> None:
    """The same tool on two subtasks, or two tools, listing passages of one document."""

    def passages(*texts: str) -> Callable[[str, ToolCallContext], ToolResult]:
        return lambda n, c: ToolResult.as_context(
            n, [UniqueTextDocument(document_id="centre", text=t) for t in texts]
        )

    tools = [
        make_tool("a", priority=1, result=passages(FACTS[0], FACTS[1])),
        make_tool("b", priority=2, result=passages(FACTS[2], FACTS[3], FACTS[0])),
    ]
    out = graph_of(tools).invoke({"messages": [("human", "a b")]})
    assert [(d.sentence_number, d.text) for d in out["documents"]] == [
        (1, FACTS[0]),
        (2, FACTS[1]),
        (1, FACTS[2]),  # sentences 1 and 2 of both results: different texts, all kept
        (2, FACTS[3]),
        (3, FACTS[0]),  # another identity (b's third), so not R6's same sentence
    ]
    assert not [e for e in out["ledger"] if e.kind is LedgerKind.DEDUPLICATED]


def test_R11_a_result_built_without_the_class_methods_loses_nothing_either() -> None:
    """The bare constructor completes no identity; R6 still removes only the same sentence."""
    four = tuple(_as_readme_builds_them())
    bare = ToolResult(tool_name="t", mode=ResultMode.CONTEXT, documents=four)
    update = record_result("1:t", "q", Outcome(result=bare))
    assert [d.text for d in merge_documents([], update["documents"])] == list(FACTS)


def test_R11_no_ledger_entry_when_nothing_is_removed() -> None:
    result = ToolResult.as_context("t", [doc("d", "x")])
    update = record_result("1:t", "q", Outcome(result=result), present=[doc("e", "x")])
    assert "ledger" not in update
    update = record_result("1:t", "q", Outcome(result=result), present=[doc("d", "x")])
    [counted] = update["ledger"]
    assert (counted.kind, counted.count) == (LedgerKind.DEDUPLICATED, 1)


def test_R11_different_texts_under_one_full_identity_are_refused_naming_the_tool() -> None:
    clash = [doc("d", "first text", page=2, sentence=5), doc("d", "second", page=2, sentence=5)]
    with pytest.raises(ConflictingDocumentsError, match="'leisure_centre'") as raised:
        ToolResult.as_context("leisure_centre", clash)
    assert isinstance(raised.value, ConfigurationError)
    assert isinstance(raised.value, InvalidToolResultError)
    assert "sentence_number=5" in str(raised.value)
    assert "first text" not in str(raised.value)  # names the tool, never its data


@pytest.mark.parametrize("run_async", [False, True], ids=["sync", "async"])
def test_R11_refused_result_fails_the_run_loudly_not_as_no_result(run_async: bool) -> None:
    """A tool bug (R11) is never R7's "no result": the run raises, naming the tool."""

    def clash() -> list[UniqueTextDocument]:
        return [doc("centre", FACTS[0]), doc("centre", FACTS[3])]

    with pytest.raises(ConflictingDocumentsError, match="leisure_centre"):
        _run(_centre(clash), SAUNA, run_async=run_async)
