"""The student services desk's graph for ``langgraph dev`` (compiled when imported, no
checkpointer: the server brings its own)."""

from newuser20_domain import university_domain_and_tools
from toolweave import build_graph

graph = build_graph(*university_domain_and_tools(), name="northfield")
