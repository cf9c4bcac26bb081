"""One event loop for the async tool methods a sync run calls (``invoke``, T9).

A client bound to the loop it first ran on (an ``httpx.AsyncClient``) stays usable: every
sync call of the process shares one long-lived loop, run by a daemon thread.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import os
import threading
from collections.abc import Coroutine
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, TypeVar

T = TypeVar("T")


@dataclass
class _Loop:
    """The sync callers' loop of one process and the thread running it (X6: no global)."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    loop: asyncio.AbstractEventLoop | None = None
    thread: threading.Thread | None = None


@functools.cache
def _of_process(pid: int) -> _Loop:
    """One holder per process id, so a forked child starts its own loop."""
    return _Loop()


def _running() -> tuple[asyncio.AbstractEventLoop, threading.Thread]:
    """The sync callers' loop and its thread, made once per process (again if its thread died)."""
    held = _of_process(os.getpid())
    with held.lock:
        if held.loop is None or held.thread is None or not held.thread.is_alive():
            held.loop = asyncio.new_event_loop()
            held.thread = threading.Thread(
                target=held.loop.run_forever, name="toolweave-sync-loop", daemon=True
            )
            held.thread.start()
        return held.loop, held.thread


def run_on_sync_loop(coro: Coroutine[Any, Any, T]) -> T:
    """Run ``coro`` to completion on the process's sync loop, with the caller's context variables.

    From that loop's own thread, it runs on a fresh loop in a helper thread instead.
    """
    loop, owner = _running()
    context = contextvars.copy_context()
    if threading.current_thread() is owner:
        with ThreadPoolExecutor(max_workers=1) as pool:
            return pool.submit(context.run, asyncio.run, coro).result()
    done: Future[T] = Future()
    started: list[asyncio.Task[T]] = []

    def start() -> None:
        task = context.run(loop.create_task, coro)  # the task runs in the caller's context
        started.append(task)
        task.add_done_callback(lambda t: _settle(t, done))

    loop.call_soon_threadsafe(start)
    try:
        return done.result()
    except BaseException:  # the caller gave up (Ctrl-C): the coroutine does not run on alone
        loop.call_soon_threadsafe(lambda: [task.cancel() for task in started])
        raise


def _settle(task: asyncio.Task[T], done: Future[T]) -> None:
    """Hand a finished task's result, error or cancellation to the waiting caller."""
    if task.cancelled():
        done.cancel()
    elif (error := task.exception()) is not None:
        done.set_exception(error)
    else:
        done.set_result(task.result())
