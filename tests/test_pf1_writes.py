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


def _turn(graph, config, text):
    chunks = list(
        graph.stream({"messages": [HumanMessage(text)]}, config, stream_mode=["updates", "values"])
    )
    updates = [
        (node, update)
        for mode, chunk in chunks
        if mode == "updates"
        for node, update in chunk.items()
    ]
    return updates, [chunk for mode, chunk in chunks if mode == "values"][-1]


def test_PF1_a_new_thread_count_is_not_reset_a_stored_count_is():
    from langgraph.checkpoint.memory import InMemorySaver

    graph = graph_of([make_tool("alpha")], checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "counted"}}
    counts = []
    for turn in range(3):
        updates, final = _turn(graph, config, "alpha?")
        normalized = dict(updates)["normalize"].get("llm_calls")
        # nothing stored to reset on a new thread: no Overwrite; a stored count is reset
        assert isinstance(normalized, Overwrite) == (turn > 0)
        written = [u.get("llm_calls", 0) for _, u in updates]
        assert final["llm_calls"] == sum(getattr(w, "value", w) for w in written)
        counts.append(final["llm_calls"])
    assert counts[0] > 0
    assert counts == [counts[0]] * 3  # each turn counts its own calls, never the thread's sum
