"""PF1: a step writes no channel it does not change (a counter's 0), and sums stay the same."""

from __future__ import annotations

from langchain_core.messages import HumanMessage
from langgraph.types import Overwrite
from support import graph_of, make_tool

from toolweave.graph.nodes import without_idle_counters


def test_PF1_a_counter_write_of_zero_is_dropped_and_a_reset_kept():
    reset = Overwrite(0)
    assert without_idle_counters({"llm_calls": 0, "ledger": []}) == {"ledger": []}
    assert without_idle_counters({"llm_calls": 1, "deep_fallback_calls": 0}) == {"llm_calls": 1}
    assert without_idle_counters({"llm_calls": reset}) == {"llm_calls": reset}
    assert without_idle_counters({"terminal": 0}) == {"terminal": 0}  # not a counter


def test_PF1_a_step_without_a_model_call_writes_no_llm_calls_and_the_total_is_unchanged():
    graph = graph_of([make_tool("alpha")])
    config = {"configurable": {"thread_id": "t"}}
    chunks = list(
        graph.stream(
            {"messages": [HumanMessage("alpha?")]}, config, stream_mode=["updates", "values"]
        )
    )
    by_node = {
        node: update
        for mode, chunk in chunks
        if mode == "updates"
        for node, update in chunk.items()
    }
    final = [chunk for mode, chunk in chunks if mode == "values"][-1]
    assert "llm_calls" not in by_node["execute"]
    written = [u.get("llm_calls", 0) for u in by_node.values()]
    assert final["llm_calls"] == sum(getattr(w, "value", w) for w in written)
