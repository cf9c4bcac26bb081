"""Effects: steps yield a :class:`Call` or :class:`Sleep`; :func:`drive`/:func:`adrive` run them."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Generator
from dataclasses import dataclass
from typing import Generic, ParamSpec, TypeAlias, TypeVar, assert_never, cast

T = TypeVar("T")
T_co = TypeVar("T_co", covariant=True)
R = TypeVar("R")
P = ParamSpec("P")


@dataclass(frozen=True, slots=True)
class Call(Generic[T_co]):
    """Call a port or tool method: its sync form and its async form, same result type."""

    call: Callable[[], T_co]  # the sync form, used under ``invoke``/``stream``
    acall: Callable[[], Awaitable[T_co]]  # the async form, awaited under ``ainvoke``/``astream``


@dataclass(frozen=True, slots=True)
class Sleep:
    """Wait ``seconds`` before going on (``time.sleep`` or ``asyncio.sleep``)."""

    seconds: float


Effect: TypeAlias = Call[object] | Sleep
"""Everything a step generator may yield."""

Steps: TypeAlias = Generator[Effect, object, R]
"""Logic written once: yields effects, receives their results, returns ``R``."""


def perform(effect: Call[T]) -> Steps[T]:
    """Yield ``effect`` and return its result, typed as the call declares (the drivers send it)."""
    result = yield effect
    return cast(T, result)


def sleep(seconds: float) -> Steps[None]:
    """Yield a :class:`Sleep` of ``seconds``."""
    yield Sleep(seconds)


def call(
    sync: Callable[P, T],
    asynchronous: Callable[P, Awaitable[T]],
    /,
    *args: P.args,
    **kwargs: P.kwargs,
) -> Call[T]:
    """The :class:`Call` of a method pair with the same arguments (``m`` and its twin ``am``)."""
    return Call(lambda: sync(*args, **kwargs), lambda: asynchronous(*args, **kwargs))


def blocking(work: Callable[[], T]) -> Call[T]:
    """A call with no async form: the async driver runs ``work`` in a worker thread."""
    return Call(work, lambda: asyncio.to_thread(work))


def drive(steps: Steps[R]) -> R:
    """Run ``steps`` to the end: each call's sync form, ``time.sleep`` for a sleep."""
    try:
        _driven(steps, _run).send(None)
    except StopIteration as stop:
        return cast(R, stop.value)
    raise AssertionError("a sync effect never suspends")


async def adrive(steps: Steps[R]) -> R:
    """Run ``steps`` to the end: each call's async form awaited, ``asyncio.sleep`` for a sleep."""
    return await _driven(steps, _arun)


async def _driven(steps: Steps[R], run: Callable[[Effect], Awaitable[object]]) -> R:
    """The drivers' one loop: each effect run by ``run``, its result or exception sent back."""
    try:
        effect = next(steps)
        while True:
            try:
                result = await run(effect)
            except BaseException as exc:  # noqa: BLE001 (re-raised inside the steps)
                effect = steps.throw(exc)
            else:
                effect = steps.send(result)
    except StopIteration as stop:
        return cast(R, stop.value)


async def _run(effect: Effect) -> object:
    """An effect's sync form (a call or ``time.sleep``); it awaits nothing."""
    match effect:
        case Call():
            return effect.call()
        case Sleep(seconds=seconds):
            time.sleep(seconds)
            return None
        case unknown:
            assert_never(unknown)


async def _arun(effect: Effect) -> object:
    match effect:
        case Call():
            return await effect.acall()
        case Sleep(seconds=seconds):
            await asyncio.sleep(seconds)
            return None
        case unknown:
            assert_never(unknown)
