"""The korhaz deep-fallback examples through the real graph, offline (D1-D7, issue 5)."""

from __future__ import annotations

import time

import pytest
from langchain_core.messages import HumanMessage

from toolweave import OfflineAssistant, build_graph
from toolweave.cli import main
from toolweave_korhaz import korhaz_domain, korhaz_tools
from toolweave_korhaz.deep_examples import DEEP_EXAMPLES


@pytest.fixture(scope="module")
def graph():  # type: ignore[no-untyped-def]
    return build_graph(korhaz_domain(), korhaz_tools(), assistant=OfflineAssistant())


@pytest.mark.parametrize("example", DEEP_EXAMPLES, ids=lambda e: e.question)
def test_deep_example_answered_offline(graph, example):  # type: ignore[no-untyped-def]
    out = graph.invoke({"messages": [HumanMessage(example.question)]})
    gate = [e.verdict for e in out["ledger"] if e.kind == "gatekeeper"]
    assert gate == [example.gatekeeper]
    assert out["activated"] == list(example.expected_tools)
    for expected in example.expected_substrings:
        assert expected in out["answer"], out["answer"]
    # D7: within the default cap; none when the context holds every word of the question (A10)
    assert out["deep_fallback_calls"] <= 12


def test_neighbor_example_skips_the_full_search(graph):  # type: ignore[no-untyped-def]
    out = graph.invoke({"messages": [HumanMessage(DEEP_EXAMPLES[1].question)]})
    (decision,) = [e for e in out["ledger"] if e.kind == "conditional"]
    assert (decision.task_no, decision.verdict) == ("1.2", "skip")
    assert out["deep_fallback_calls"] == 2  # the gatekeeper and one page read


def test_full_search_example_reads_the_fee_page(graph):  # type: ignore[no-untyped-def]
    out = graph.invoke({"messages": [HumanMessage(DEEP_EXAMPLES[2].question)]})
    entry = out["context_buffer"]["1.2:korhaz_context_search"][0]
    # the page read, given as the page's own sentences its answer rests on (R9)
    assert {(d.document_id, d.page) for d in entry.documents} == {("korhaz/dijszabas.md", 1)}
    assert all(d.sentence_number for d in entry.documents)


def test_deep_fallback_is_one_round_per_message(graph):  # type: ignore[no-untyped-def]
    config = {"configurable": {"thread_id": "deep-rounds"}}
    out = graph.invoke({"messages": [HumanMessage(DEEP_EXAMPLES[2].question)]}, config)
    assert sum(e.kind == "gatekeeper" for e in out["ledger"]) == 1
    out = graph.invoke({"messages": [HumanMessage(DEEP_EXAMPLES[1].question)]}, config)
    assert sum(e.kind == "gatekeeper" for e in out["ledger"]) == 1  # a new message, a new round


def test_cli_shows_the_gatekeeper_and_the_deep_search_steps(capsys):  # type: ignore[no-untyped-def]
    assert main(["ask", DEEP_EXAMPLES[2].question]) == 0
    out = capsys.readouterr().out
    assert "gatekeeper" not in out  # P4: a person sees the phrases only
    assert "· Tovább keresek: az első oldalak nem mondtak el mindent" in out  # D1, in words
    assert "· „Térítési díjak” (1/8): van benne válasz" in out  # P4: a page read, in words
    assert "6 000 Ft éjszakánként" in out
    assert main(["ask", "--verbose", DEEP_EXAMPLES[2].question]) == 0  # the developer's view
    out = capsys.readouterr().out
    assert "· 1 gatekeeper: context insufficient; missing: Mennyi a térítési díj" in out
    # P4: the piece named once, with the subtasks that search for it
    piece = DEEP_EXAMPLES[2].question
    assert f"· 1 deep search planned: '{piece}' (1.1, 1.2)" in out
    assert "· 1.1 „Kényelmi szolgáltatások, 1. oldal” (1/1): " in out  # P4: each page read
    assert "· 1.2 runs (conditional)" in out
    assert "· 1.2 „Térítési díjak” (1/8): " in out
    assert "TOOL_PROGRESS" not in out
    assert "6 000 Ft éjszakánként" in out


def test_korhaz_tools_stays_fast():
    korhaz_tools()
    started = time.perf_counter()
    tools = korhaz_tools()
    assert time.perf_counter() - started < 0.1
    assert {"korhaz_neighbor_search", "korhaz_context_search"} <= {t.name for t in tools}
