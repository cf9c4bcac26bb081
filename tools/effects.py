"""Effects: a step generator's calls to the outside world, and its two drivers.

Logic that needs a model or a tool is written once, as a generator of *steps*:
pure code that yields an :class:`Effect` wherever it needs the outside world and
receives the effect's result, or its exception, back at the ``yield``.
:func:`drive` calls each effect's sync form, :func:`adrive` awaits its async one.
The graph's nodes (``toolweave.graph.nodes``) and the coordinator phase
(``toolweave.coordinators.phase``) both run on these drivers; they sit here, in
the tools layer, so that both layers above can import them.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Generator
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

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


__all__ = ["Effect", "Steps", "adrive", "blocking", "drive"]
