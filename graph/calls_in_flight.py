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
outcomes live in the compiled graph's memory (the last :data:`KEPT_CALLS`): a re-run in
another process relies on the journal of the run's store and on the key
(:mod:`toolweave.graph.effect_journal`).
"""

from __future__ import annotations

import asyncio
import functools
import logging
import threading
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from typing import TypeVar, cast

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

    def finished(self, tool: str, key: str, made: Call[T], *, wait_s: float) -> Call[T]:
        """``made`` (the call of ``tool`` under ``key``) as a call a cancelled run does not cut.

        Its async form runs the call as a task and awaits it shielded; a call under ``key``
        that an earlier, cancelled run started is awaited (at most ``wait_s``) or, once
        finished, its result taken, instead of calling the tool again. The sync form takes
        a finished earlier call's result, or calls.
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
                task.add_done_callback(functools.partial(_read_failure, tool))
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


def _read_failure(tool: str, task: asyncio.Task[object]) -> None:
    """Log what a call whose run was cancelled raised: no run is left to report it."""
    if task.cancelled():
        return
    error = task.exception()
    if error is not None:
        logger.warning(FAILED_UNREAD, tool, type(error).__name__)
