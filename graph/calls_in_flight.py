"""S5, Q6: the call of a tool that acts finishes even when its run is cancelled mid-call.

Under ``ainvoke``/``astream`` a run can be cancelled while a tool that acts is awaited: a
web client gone while the tool's progress streams (LangGraph cancels the step when its
stream is closed), a server's run cancelled, a task timed out. Cancelling the tool's
coroutine does not take back what it already sent (the booking's request is out), but
its reply is lost with the run, and the run's re-run (the same message sent again,
``resume_interrupted``) makes the same call under the same key: a second booking for a
tool that does not dedupe on ``ctx.idempotency_key``.

So under the async driver such a call runs as a task of its own, shielded from the
run's cancellation: it finishes, and the graph keeps its outcome under the call's key.
The re-run of the same call waits for it (at most ``Limits.thread_wait_s``) and takes
its result instead of calling again. A call that raised, or one still running on an
event loop that is gone, is made again under its key (Q6: at least once, one key). The
outcomes live in the compiled graph's memory (the last :data:`KEPT_CALLS`); where the
run has a store, a call that ends after its run was cancelled also records its result
in the journal (:mod:`toolweave.graph.effect_journal`), where a re-run in another
process finds it.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import threading
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar, cast

from toolweave.state.errors import CallStillRunningError
from toolweave.tools.effects import Call

T = TypeVar("T")

logger = logging.getLogger(__name__)

KEPT_CALLS = 256
"""Calls whose task a graph keeps at most (the oldest go first): a re-run comes soon."""

STILL_RUNNING = (
    "{tool}: its call from a cancelled run of this request is still running after {s:g} s; "
    "send the same message again later for its result (or raise Limits.thread_wait_s)"
)
NOT_RECORDED = (
    "tool %s: the result of its call, ended after its run was cancelled, was not recorded "
    "in the journal (%s); a re-run in another process makes the call again (Q6)"
)
FAILED_UNREAD = (
    "tool %s: its call, cut off by its run's cancellation, then raised %s; "
    "the run's re-run will make it again under the same key (Q6)"
)


class CallsInFlight:
    """The tasks of a graph's calls of tools that act, by idempotency key (S5, Q6)."""

    def __init__(self, kept: int = KEPT_CALLS) -> None:
        """A registry keeping the last ``kept`` calls."""
        self._kept = kept
        self._tasks: OrderedDict[str, asyncio.Task[object]] = OrderedDict()
        self._lock = threading.Lock()
        self._telling: set[asyncio.Future[None]] = set()

    def finished(
        self,
        tool: str,
        key: str,
        made: Call[T],
        *,
        wait_s: float,
        after_cut: Callable[[T], Awaitable[None]] | None = None,
    ) -> Call[T]:
        """``made`` (the call of ``tool`` under ``key``) as a call a cancelled run does not cut.

        Its async form runs the call as a task and awaits it shielded; a call under ``key``
        that an earlier, cancelled run started is awaited (at most ``wait_s``) or, once
        finished, its result taken, instead of calling the tool again. The sync form takes
        a finished earlier call's result, or calls. ``after_cut`` is given the result of a
        call that ends after its run was cancelled (to record it where other processes
        look: the journal).
        """

        def sync() -> T:
            earlier = self._earlier(key)
            if earlier is not None and earlier.done():
                return cast(T, earlier.result())
            return made.call()

        async def asynchronous() -> T:
            earlier = self._earlier(key)
            if earlier is not None and earlier.done():  # perhaps of another loop: read it
                return cast(T, earlier.result())
            if earlier is not None:
                try:
                    return cast(T, await asyncio.wait_for(asyncio.shield(earlier), wait_s))
                except TimeoutError as exc:
                    raise CallStillRunningError(STILL_RUNNING.format(tool=tool, s=wait_s)) from exc
            task = self._started(key, made.acall)
            try:
                return cast(T, await asyncio.shield(task))
            except asyncio.CancelledError:  # the run is gone; the call goes on
                task.add_done_callback(functools.partial(self._ended_after_cut, tool, after_cut))
                raise

        return Call(sync, asynchronous)

    def _earlier(self, key: str) -> asyncio.Task[object] | None:
        """The call under ``key`` whose result can still be had: finished well, or running here."""
        with self._lock:
            task = self._tasks.get(key)
        if task is None:
            return None
        if task.done():
            return task if not task.cancelled() and task.exception() is None else None
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:  # a sync re-run: the task's loop may never run again
            return None
        return task if task.get_loop() is running else None

    def _ended_after_cut(
        self,
        tool: str,
        after_cut: Callable[[Any], Awaitable[None]] | None,
        task: asyncio.Task[object],
    ) -> None:
        """A call whose run was cancelled ended: log a failure, or pass on its result."""
        if task.cancelled():
            return
        if (error := task.exception()) is not None:
            logger.warning(FAILED_UNREAD, tool, type(error).__name__)
            return
        if after_cut is not None:
            told = asyncio.ensure_future(after_cut(task.result()))
            self._telling.add(told)  # a strong reference until it is done
            told.add_done_callback(functools.partial(self._told, tool))

    def _told(self, tool: str, told: asyncio.Future[None]) -> None:
        self._telling.discard(told)
        if not told.cancelled() and (error := told.exception()) is not None:
            logger.warning(NOT_RECORDED, tool, type(error).__name__)

    def _started(self, key: str, acall: Callable[[], Awaitable[object]]) -> asyncio.Task[object]:
        """Start the call as a task of its own, kept under ``key``."""

        async def run() -> object:
            return await acall()

        task = asyncio.ensure_future(run())
        with self._lock:
            self._tasks[key] = task
            self._tasks.move_to_end(key)
            while len(self._tasks) > self._kept:
                self._tasks.popitem(last=False)
        return task
