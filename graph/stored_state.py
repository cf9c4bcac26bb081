"""Read a thread's stored state without the graph that wrote it (``toolweave explain``).

Delta channels store their writes, so LangGraph's own reader rebuilds the state.
"""

from __future__ import annotations

from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import START, StateGraph

from toolweave.state.graph_state import GraphState


def stored_values(
    checkpointer: BaseCheckpointSaver[Any], config: RunnableConfig
) -> dict[str, Any] | None:
    """The state values of the checkpoint ``config`` names, or ``None`` if none is stored."""
    if checkpointer.get_tuple(config) is None:
        return None
    reader = StateGraph(GraphState)
    reader.add_node("read", lambda state: {})
    reader.add_edge(START, "read")
    return dict(reader.compile(checkpointer=checkpointer).get_state(config).values)
