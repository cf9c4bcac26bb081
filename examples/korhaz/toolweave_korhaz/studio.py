"""The graph that ``langgraph dev`` and LangGraph Studio load (see ``langgraph.json``).

The demo's only module that compiles a graph when imported. It has no
checkpointer on purpose: the LangGraph server brings its own persistence and
refuses a graph compiled with one. It loads the domain from its own plugin module, so
the server needs the package importable (``langgraph.json``'s ``dependencies`` put
``examples/korhaz`` on the path), not installed. The assistant comes from the environment
(ChatOpenAI when ``OPENAI_API_KEY`` is set, else the offline model), so importing
it needs no secret.
"""

from __future__ import annotations

from toolweave import ToolweaveGraph, build_graph
from toolweave_korhaz.plugin import load

graph: ToolweaveGraph = build_graph(*load(), name="korhaz")
"""The ``korhaz`` hospital domain, as the graph ``korhaz`` of ``langgraph.json``."""

__all__ = ["graph"]
