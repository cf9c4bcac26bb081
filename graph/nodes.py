"""One node, two bodies: a sync one for ``invoke`` and a native async one for ``ainvoke``.

A node's logic is written once, as a generator of *steps*: pure code that yields
an :class:`Effect` wherever it needs the outside world (a model call, a tool
call) and receives the effect's result, or its exception, back at the ``yield``.
Two drivers run the same generator: :func:`drive` calls each effect's sync
function, :func:`adrive` awaits its async one. So there is no second copy of any
rule, and under ``ainvoke``/``astream`` a node never touches LangGraph's thread
pool unless an effect itself chooses to (the LLM port's and ``ChatbotTool``'s
default async methods run their sync twin in a worker thread).

LangGraph registers a function node as its internal ``RunnableCallable(func, afunc)``
(for a sync function, ``afunc`` runs ``func`` in the executor); :func:`make_node`
builds the same object with our own ``afunc``, so ``invoke`` runs the sync body
and ``ainvoke`` the async one. ``tests/test_async_rules.py`` pins that behaviour,
since the class lives in ``langgraph._internal``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Generator
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from langchain_core.runnables import Runnable
from langgraph._internal._runnable import RunnableCallable
from langgraph.runtime import Runtime

from toolweave.graph.context import RunContext
from toolweave.graph.tracing import label_run
from toolweave.state.graph_state import GraphState

T = TypeVar("T")
R = TypeVar("R")


@dataclass(frozen=True, slots=True)
class Effect(Generic[T]):
    """One call to the outside world, in its sync and its async form."""

    call: Callable[[], T]
    """The sync form, used under ``invoke``/``stream``."""
    acall: Callable[[], Awaitable[T]]
    """The async form, awaited under ``ainvoke``/``astream``."""


def blocking(call: Callable[[], T]) -> Effect[T]:
    """An effect with no async form: the async driver runs ``call`` in a worker thread.

    For sync-only work that may block (I/O without an async client); context
    variables go with it, so progress events and streamed tokens still arrive.
    """
    return Effect(call, lambda: asyncio.to_thread(call))


Steps = Generator[Effect[Any], Any, R]
"""A node's logic: yields effects, receives their results, returns the node's update."""

StepFunction = Callable[[GraphState, Runtime[RunContext]], Steps[R]]


def drive(steps: Steps[R]) -> R:
    """Run ``steps`` to the end, calling each effect's sync form."""
    try:
        effect = next(steps)
        while True:
            try:
                result = effect.call()
            except BaseException as exc:  # noqa: BLE001 (re-raised inside the node's logic)
                effect = steps.throw(exc)
            else:
                effect = steps.send(result)
    except StopIteration as stop:
        value: R = stop.value
        return value


async def adrive(steps: Steps[R]) -> R:
    """Run ``steps`` to the end, awaiting each effect's async form."""
    try:
        effect = next(steps)
        while True:
            try:
                result = await effect.acall()
            except BaseException as exc:  # noqa: BLE001 (re-raised inside the node's logic)
                effect = steps.throw(exc)
            else:
                effect = steps.send(result)
    except StopIteration as stop:
        value: R = stop.value
        return value


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

    def sync_body(state: GraphState, runtime: Runtime[RunContext]) -> R:
        update = body(state, runtime)
        label_run(name, state, update)
        return update

    async def async_body(state: GraphState, runtime: Runtime[RunContext]) -> R:
        update = body(state, runtime)
        label_run(name, state, update)
        return update

    sync_body.__name__ = async_body.__name__ = name
    return RunnableCallable(sync_body, async_body, name=name, trace=False)
