"""The hotel group's graph for ``langgraph dev`` (compiled when imported, no checkpointer)."""

from newuser12_domain.plugin import load
from toolweave import build_graph

graph = build_graph(*load(), name="hotel")
