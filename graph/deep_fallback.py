"""The ``deep_fallback`` node: one turn per message after the root task closes (D7).

The gatekeeper and the deep-search coordinator (D1-D6) plug in here; until a
domain configures a deep-fallback tool, the node only records that it had its turn.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from langgraph.runtime import Runtime

from toolweave.graph.context import Dependencies, RunContext
from toolweave.state.graph_state import GraphState
from toolweave.state.ledger import LedgerEntry, LedgerKind
from toolweave.state.task import ROOT_TASK_NO


def make_deep_fallback(deps: Dependencies) -> Callable[..., dict[str, Any]]:
    """Build the ``deep_fallback`` node over ``deps``."""

    def deep_fallback(state: GraphState, runtime: Runtime[RunContext]) -> dict[str, Any]:
        """Consult the domain's deep-fallback tool for the prompt type (D2)."""
        tool = deps.domain.deep_fallback_tool(state.get("prompt_type"))
        reason = "no deep-fallback tool for this prompt type" if tool is None else tool.name
        entry = LedgerEntry(
            kind=LedgerKind.DEEP_FALLBACK, task_no=ROOT_TASK_NO, verdict="not run", reason=reason
        )
        return {"deep_fallback_done": True, "cursor": ROOT_TASK_NO, "ledger": [entry]}

    return deep_fallback
