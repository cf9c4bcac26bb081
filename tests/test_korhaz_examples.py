"""Every example question of the README is answered correctly by the offline model (issue 2)."""

from __future__ import annotations

import pytest
from langchain_core.messages import HumanMessage

from toolweave import OfflineAssistant, build_graph
from toolweave_korhaz import EXAMPLE_QUESTIONS, korhaz_domain, korhaz_tools


@pytest.fixture(scope="module")
def graph():  # type: ignore[no-untyped-def]
    return build_graph(korhaz_domain(), korhaz_tools(), assistant=OfflineAssistant())


@pytest.mark.parametrize("example", EXAMPLE_QUESTIONS, ids=lambda e: e.question)
def test_example_question_answered_offline(graph, example):  # type: ignore[no-untyped-def]
    out = graph.invoke({"messages": [HumanMessage(example.question)]})
    for expected in example.expected_substrings:
        assert expected in out["answer"], out["answer"]
    ran = {key.rpartition(":")[2] for key in out["activated"]}
    assert set(example.expected_tools) <= ran
    # normalize, route, the gatekeeper (D1) and the answer: the context suffices, no deep search
    assert out["llm_calls"] <= 4
    assert not ran & {"korhaz_deep_search", "korhaz_neighbor_search", "korhaz_context_search"}
    gate = [e.verdict for e in out["ledger"] if e.kind == "gatekeeper"]
    assert gate in ([], ["sufficient"])
