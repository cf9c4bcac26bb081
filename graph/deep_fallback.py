"""The ``deep_fallback`` node: one turn per message after the root task closes (D7).

The gatekeeper and the deep-search coordinator (D1-D6) plug in here; until a
domain configures a deep-fallback tool, the node only records that it had its turn.
"""

from __future__ import annotations

from collections.abc import Callable

from langgraph.runtime import Runtime
from langgraph.types import Command

from toolweave.graph.context import Dependencies, RunContext
from toolweave.graph.handover import handover
from toolweave.graph.walk import Phase
from toolweave.state.graph_state import GraphState
from toolweave.state.ledger import LedgerEntry, LedgerKind
from toolweave.state.task import ROOT_TASK_NO


def make_deep_fallback(deps: Dependencies) -> Callable[..., Command[Phase]]:
    """Build the ``deep_fallback`` node over ``deps``."""

    def deep_fallback(state: GraphState, runtime: Runtime[RunContext]) -> Command[Phase]:
        """Consult the domain's deep-fallback tool for the prompt type (D2)."""
        tool = deps.domain.deep_fallback_tool(state.get("prompt_type"))
        reason = "no deep-fallback tool for this prompt type" if tool is None else tool.name
        entry = LedgerEntry(
            kind=LedgerKind.DEEP_FALLBACK, task_no=ROOT_TASK_NO, verdict="not run", reason=reason
        )
        update = {"deep_fallback_done": True, "cursor": ROOT_TASK_NO, "ledger": [entry]}
        return handover(state, update)

    return deep_fallback
