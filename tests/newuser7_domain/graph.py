"""The office's graph for ``langgraph dev`` (compiled when imported, no checkpointer)."""

from newuser7_domain.plugin import load
from toolweave import Limits, build_graph

graph = build_graph(*load(), name="permits", limits=Limits(run_deadline_s=600))
