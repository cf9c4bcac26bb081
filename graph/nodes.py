"""One node, two bodies: a sync one for ``invoke`` and a native async one for ``ainvoke``.

A node's logic is written once, as steps (:mod:`toolweave.tools.effects`):
``drive`` runs them with each effect's sync form, ``adrive`` awaits its async one,
so under ``ainvoke``/``astream`` a node never touches LangGraph's thread pool
unless an effect itself chooses to.

:func:`make_node` builds LangGraph's own ``RunnableCallable(func, afunc)`` (whose
default ``afunc`` runs ``func`` in the executor) with our async body;
``tests/test_async_rules.py`` pins that behaviour, since the class is LangGraph's
(``graph/langgraph_private.py``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from langchain_core.runnables import Runnable
from langgraph.runtime import Runtime

from toolweave.graph.context import RunContext
from toolweave.graph.langgraph_private import RunnableCallable
from toolweave.graph.tracing import label_run
from toolweave.state.graph_state import GraphState
from toolweave.tools.effects import Steps as Steps
from toolweave.tools.effects import adrive, drive

R = TypeVar("R")

StepFunction = Callable[[GraphState, Runtime[RunContext]], Steps[R]]


def make_node(name: str, step: StepFunction[R]) -> Runnable[Any, Any]:
    """A LangGraph node whose sync and async bodies both run ``step``."""

    def sync_body(state: GraphState, runtime: Runtime[RunContext]) -> R:
        update = drive(step(state, runtime))
        label_run(name, state, update)
        return update

    async def async_body(state: GraphState, runtime: Runtime[RunContext]) -> R:
        update = await adrive(step(state, runtime))
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
