"""One run at a time per thread, in one process and across processes (S5, Q5, Q6)."""

from __future__ import annotations

import asyncio
import threading
import time
import weakref
from collections.abc import AsyncIterator, Iterator, Mapping
from contextlib import asynccontextmanager, contextmanager, suppress
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from toolweave.graph.database_lock import aholding_in_database, holding_in_database
from toolweave.state.errors import ThreadBusyError

Key = tuple[int, str]
"""(the checkpointer's id, the thread id)."""

_HELD: ContextVar[frozenset[Key]] = ContextVar("toolweave_held_threads", default=frozenset())
POLL_S = 0.005
"""How often a waiting async run looks at the lock again (it never blocks the event loop)."""
BUSY = (
    "another run on thread {thread!r} has not ended after {seconds:g} s; send the message "
    "again once it has (its answer may be the one wanted)"
)


class _Lock:
    """A thread's lock; a class of its own so the table can hold it weakly."""

    __slots__ = ("__weakref__", "lock")

    def __init__(self) -> None:
        self.lock = threading.Lock()


class ThreadLocks:
    """The locks of the threads a compiled graph and its copies share; each lives while in use."""

    def __init__(self) -> None:
        """An empty table."""
        self._guard = threading.Lock()
        self._locks: weakref.WeakValueDictionary[Key, _Lock] = weakref.WeakValueDictionary()

    def of(self, key: Key) -> _Lock:
        """The lock of ``key``'s thread, made on first use."""
        with self._guard:
            found = self._locks.get(key)
            if found is None:
                found = self._locks[key] = _Lock()
            return found


def thread_key(saver: object, configurable: Mapping[str, Any]) -> Key | None:
    """The lock key of a run: its checkpointer and thread, or ``None`` (nothing to hold)."""
    thread_id = configurable.get("thread_id")
    if saver is None or not thread_id or configurable.get("checkpoint_ns"):
        return None
    return (id(saver), str(thread_id))


@dataclass(frozen=True)
class _Hold:
    """What a run waits for and holds: its thread's lock, by when, and the error past it."""

    entry: _Lock
    key: Key
    wait_s: float
    until: float

    def busy(self) -> ThreadBusyError:
        """The error of a wait that is over."""
        return ThreadBusyError(BUSY.format(thread=self.key[1], seconds=self.wait_s))


def _hold(locks: ThreadLocks, key: Key | None, wait_s: float) -> _Hold | None:
    """What a run must take: ``None`` without a thread or in a run holding it."""
    if key is None or key in _HELD.get():
        return None
    return _Hold(locks.of(key), key, wait_s, time.monotonic() + wait_s)


@contextmanager
def _kept(entry: _Lock, key: Key) -> Iterator[None]:
    """While the lock (taken) is held: the key in this context, released at the end."""
    token = _HELD.set(_HELD.get() | {key})
    try:
        yield
    finally:
        entry.lock.release()  # first: a run closed from another context cannot reset the variable
        with suppress(ValueError):
            _HELD.reset(token)


@contextmanager
def holding(
    locks: ThreadLocks, key: Key | None, wait_s: float, saver: object = None
) -> Iterator[None]:
    """Hold ``key``'s thread for a sync run (no-op for ``None`` or a nested run).

    Raises:
        ThreadBusyError: The thread's earlier run did not end within ``wait_s``.
        DatabaseUnavailableError: The PostgreSQL database cannot be reached.
    """
    hold = _hold(locks, key, wait_s)
    if hold is None:
        yield
        return
    if not hold.entry.lock.acquire(timeout=wait_s):
        raise hold.busy()
    with (
        _kept(hold.entry, hold.key),
        holding_in_database(saver, hold.key[1], hold.until, hold.busy),
    ):
        yield


async def _acquire(hold: _Hold) -> None:
    """Take the hold's lock without blocking the event loop, by its deadline."""
    while not hold.entry.lock.acquire(blocking=False):
        if time.monotonic() >= hold.until:
            raise hold.busy()
        await asyncio.sleep(POLL_S)


@asynccontextmanager
async def aholding(
    locks: ThreadLocks, key: Key | None, wait_s: float, saver: object = None
) -> AsyncIterator[None]:
    """Hold ``key``'s thread for an async run, not blocking the loop; raises as :func:`holding`."""
    hold = _hold(locks, key, wait_s)
    if hold is None:
        yield
        return
    await _acquire(hold)
    with _kept(hold.entry, hold.key):
        async with aholding_in_database(saver, hold.key[1], hold.until, hold.busy):
            yield
