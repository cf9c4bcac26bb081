"""The graph that ``langgraph dev`` and LangGraph Studio load (see ``langgraph.json``).

The demo's only module that compiles a graph when imported. It has no
checkpointer on purpose: the LangGraph server brings its own persistence and
refuses a graph compiled with one. It loads the domain from its own plugin module, so
the server needs the package importable (``langgraph.json``'s ``dependencies`` put
``examples/korhaz`` on the path), not installed. The assistant comes from the environment
(ChatOpenAI when ``OPENAI_API_KEY`` is set, else the offline model), so importing
it needs no secret. Each run has an overall deadline (X5), as each message of
``toolweave ask`` has: a real model that stalls or keeps streaming ends in an error the
its client sees, with the thread kept, not in a run that never ends.
"""

from __future__ import annotations

from toolweave import Limits, ToolweaveGraph, build_graph
from toolweave_korhaz.plugin import load

RUN_DEADLINE_S = 600.0
"""Seconds one served run may take: the CLI's default (ten 60 s request timeouts)."""

graph: ToolweaveGraph = build_graph(
    *load(), name="korhaz", limits=Limits(run_deadline_s=RUN_DEADLINE_S)
)
"""The ``korhaz`` hospital domain, as the graph ``korhaz`` of ``langgraph.json``."""

__all__ = ["graph"]
