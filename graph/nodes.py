"""One node, two bodies: a sync one for ``invoke`` and a native async one for ``ainvoke``.

A node's logic is written once, as steps (:mod:`toolweave.tools.effects`): pure
code that yields an effect wherever it needs the outside world (a model call, a
tool call, a wait) and receives the effect's result, or its exception, back at
the ``yield``. It composes the LLM port's steps and the tools' calls with
``yield from``, so one driver runs the node and every call in it: :func:`drive`
calls each effect's sync form, :func:`adrive` awaits its async one. So there is
no second copy of any rule, and under ``ainvoke``/``astream`` a node never
touches LangGraph's thread pool unless an effect itself chooses to (the LLM
port's and ``ChatbotTool``'s default async methods run their sync twin in a
worker thread).

LangGraph registers a function node as its internal ``RunnableCallable(func, afunc)``
(for a sync function, ``afunc`` runs ``func`` in the executor); :func:`make_node`
builds the same object with our own ``afunc``, so ``invoke`` runs the sync body
and ``ainvoke`` the async one. ``tests/test_async_rules.py`` pins that behaviour,
since the class is LangGraph's own (``graph/langgraph_private.py``).
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
