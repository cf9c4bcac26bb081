"""The orchestration graph: one node per phase, and its builder."""

from toolweave.graph.builder import PHASES, build_graph, create_state_graph
from toolweave.graph.compiled import ToolweaveGraph
from toolweave.graph.context import Dependencies, Limits, RunContext
from toolweave.graph.walk import Step, next_step, route_entry

__all__ = [
    "PHASES",
    "Dependencies",
    "Limits",
    "RunContext",
    "Step",
    "ToolweaveGraph",
    "build_graph",
    "create_state_graph",
    "next_step",
    "route_entry",
]
