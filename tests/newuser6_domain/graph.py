"""The shop's graph for ``langgraph dev`` (compiled when imported, no checkpointer)."""

from newuser6_domain.plugin import load
from toolweave import Limits, build_graph

graph = build_graph(*load(), name="bikeshop", limits=Limits(run_deadline_s=600))
