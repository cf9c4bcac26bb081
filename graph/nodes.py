"""One node, two bodies: a sync one for ``invoke`` and a native async one for ``ainvoke``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar, cast

from langchain_core.runnables import Runnable
from langgraph.runtime import Runtime

from toolweave.graph.context import RunContext
from toolweave.graph.langgraph_private import RunnableCallable
from toolweave.graph.tracing import label_run
from toolweave.state.graph_state import GraphState
from toolweave.state.ledger import LedgerEntry, LedgerKind
from toolweave.state.task import TaskNode
from toolweave.tools.effects import Steps as Steps
from toolweave.tools.effects import adrive, drive

R = TypeVar("R")

StepFunction = Callable[[GraphState, Runtime[RunContext]], Steps[R]]

_COUNTERS = ("llm_calls", "deep_fallback_calls")
"""Keys summed by their reducer: adding 0 changes nothing, so a 0 is not written."""


def without_idle_counters(update: R) -> R:
    """``update`` without counter writes of 0 (PF1: every channel written costs a step work)."""
    if not isinstance(update, dict) or not any(update.get(key) == 0 for key in _COUNTERS):
        return update
    kept = {k: v for k, v in update.items() if not (k in _COUNTERS and type(v) is int and v == 0)}
    return cast("R", kept)


def make_node(name: str, step: StepFunction[R]) -> Runnable[Any, Any]:
    """A LangGraph node whose sync and async bodies both run ``step``."""

    def sync_body(state: GraphState, runtime: Runtime[RunContext]) -> R:
        update = without_idle_counters(drive(step(state, runtime)))
        label_run(name, state, update)
        return update

    async def async_body(state: GraphState, runtime: Runtime[RunContext]) -> R:
        update = without_idle_counters(await adrive(step(state, runtime)))
        label_run(name, state, update)
        return update

    sync_body.__name__ = async_body.__name__ = name
    return RunnableCallable(sync_body, async_body, name=name, trace=False)


def make_pure_node(
    name: str, body: Callable[[GraphState, Runtime[RunContext]], R]
) -> Runnable[Any, Any]:
    """A node with no effect at all: both bodies run ``body`` inline (no thread)."""

    def step(state: GraphState, runtime: Runtime[RunContext]) -> Steps[R]:
        yield from ()
        return body(state, runtime)

    return make_node(name, step)


def entry(
    at: TaskNode | str | None,
    tool: str | None,
    kind: LedgerKind,
    verdict: str,
    reason: str,
    **fields: Any,
) -> LedgerEntry:
    """A ledger entry about ``tool`` on a task (its node or its number, L1)."""
    task_no = at.task_no if isinstance(at, TaskNode) else at
    return LedgerEntry(
        kind=kind, task_no=task_no, tool=tool, verdict=verdict, reason=reason, **fields
    )
