"""The operator's graph for ``langgraph dev`` (compiled when imported, no checkpointer)."""

from newuser8_domain.plugin import load
from toolweave import build_graph

graph = build_graph(*load(), name="kolej")
