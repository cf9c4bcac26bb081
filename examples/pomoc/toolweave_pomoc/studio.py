"""The graph that ``langgraph dev`` loads for the helpdesk (``examples/pomoc/langgraph.json``).

It compiles the ``pomoc`` graph when imported, without a checkpointer (the LangGraph
server brings its own), with the model from the environment (the offline model when
no ``OPENAI_API_KEY`` is set) and an overall deadline per run (X5).
"""

from __future__ import annotations

from toolweave import Limits, ToolweaveGraph, build_graph
from toolweave_pomoc.plugin import load

RUN_DEADLINE_S = 600.0
"""Seconds one served run may take: the CLI's default (ten 60 s request timeouts)."""

graph: ToolweaveGraph = build_graph(
    *load(), name="pomoc", limits=Limits(run_deadline_s=RUN_DEADLINE_S)
)
"""The ``pomoc`` helpdesk domain, as the graph ``pomoc`` of its ``langgraph.json``."""

__all__ = ["graph"]
