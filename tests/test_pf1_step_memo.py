"""PF1, X6: a step's pure text functions run once per text, and nothing outlives the step."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import HumanMessage
from support import doc, graph_of, make_tool

from toolweave import ToolResult
from toolweave.llm import citations
from toolweave.tools import memo
from toolweave.tools.memo import per_step, remembered


def _counted() -> tuple[list[str], Any]:
    calls: list[str] = []

    @per_step
    def split(text: str) -> list[str]:
        calls.append(text)
        return text.split()

    return calls, split


def test_PF1_inside_a_step_a_text_is_read_once_outside_every_time() -> None:
    calls, split = _counted()
    split("a b")
    split("a b")
    assert calls == ["a b", "a b"]  # no step open: nothing is remembered
    calls.clear()
    with remembered():
        assert split("a b") == ["a", "b"]
        assert split("a b") == ["a", "b"]
        split("c")
        with remembered():  # a block inside a step shares the step's memo
            split("c")
    assert calls == ["a b", "c"]


def test_X6_a_remembered_list_is_a_new_list_each_time_and_forgotten_with_the_step() -> None:
    calls, split = _counted()
    with remembered():
        first = split("a b")
        first.append("changed")
        assert split("a b") == ["a", "b"]  # the caller's change is its own
    with remembered():
        split("a b")
    assert calls == ["a b", "a b"]  # the second step read the text again
    assert memo._MEMO.get() is None


def test_PF1_the_answer_check_reads_a_sentence_once_with_the_same_results() -> None:
    sentence = "The Central desk opens at 9:00 on Monday, call +36 1 234 5678."
    expected = citations.checkable(sentence)
    with remembered():
        assert citations.checkable(sentence) == expected
        assert citations.checkable(sentence) == expected
    assert citations.checkable.__wrapped__(sentence) == expected  # type: ignore[attr-defined]


def test_X6_every_phase_step_runs_in_a_memo_of_its_own_none_left_after_the_run() -> None:
    seen: list[Any] = []

    def result(name: str, ctx: Any) -> ToolResult:
        seen.append(memo._MEMO.get())
        return ToolResult.as_context(name, [doc("d", "t says hi")])

    graph = graph_of([make_tool("t", result=result)])
    for _ in range(2):
        out = graph.invoke({"messages": [HumanMessage("t please")]})
        assert out["answer"]
    assert len(seen) == 2
    assert all(isinstance(found, dict) for found in seen)
    assert seen[0] is not seen[1]  # each run's step had its own
    assert memo._MEMO.get() is None


@pytest.mark.parametrize("text", ["", "one", "Two sentences. Here is the second."])
def test_PF1_remembered_text_functions_give_what_they_give_outside(text: str) -> None:
    from toolweave.tools import text as kit

    outside = (kit.sections(text), citations.checkable(text))
    with remembered():
        assert (kit.sections(text), citations.checkable(text)) == outside
        assert (kit.sections(text), citations.checkable(text)) == outside
