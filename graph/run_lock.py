"""One run at a time per thread, in one process and across processes (S5, Q5, Q6).

Across processes that share a PostgreSQL checkpointer: a transaction-level advisory lock on a
connection of its own, which holds through PgBouncer.
"""

from __future__ import annotations

import asyncio
import hashlib
import inspect
import sys
import threading
import time
import weakref
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from contextlib import asynccontextmanager, contextmanager, suppress
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from toolweave.state.errors import ConfigurationError, DatabaseUnavailableError, ThreadBusyError
from toolweave.state.secrets import error_text

if TYPE_CHECKING:
    from psycopg import AsyncConnection, Connection

Key = tuple[int, str]
"""(the checkpointer's id, the thread id)."""

_HELD: ContextVar[frozenset[Key]] = ContextVar("toolweave_held_threads", default=frozenset())
POLL_S = 0.005
"""How often a waiting async run looks at the lock again (it never blocks the event loop)."""
BUSY = (
    "another run on thread {thread!r} has not ended after {seconds:g} s; send the message "
    "again once it has (its answer may be the one wanted)"
)
DATABASE_POLL_S = 0.05
"""How often a run waiting for another process's run asks the database again."""
KEY_PREFIX = b"toolweave.thread:"
"""Hashed with the thread id into the advisory lock's 64-bit key."""
NO_IDLE_TIMEOUT = "SET LOCAL idle_in_transaction_session_timeout = 0"
"""The lock's transaction is idle for the whole run: a server-wide timeout must not end it."""
TRY = "SELECT pg_try_advisory_xact_lock(%s)"
UNREACHABLE = (
    "cannot hold thread {thread!r} in the checkpoint database (one run at a time across "
    "processes): {error}; check that the database is reachable, then send the message again"
)
ASYNC_SETTINGS = (
    "the checkpointer's connection pool computes its connection settings asynchronously; "
    "run the graph with ainvoke/astream, or give the pool a plain conninfo string"
)

Busy = Callable[[], Exception]
"""Makes the error a run raises when its wait is over (``ThreadBusyError``)."""


@dataclass(frozen=True)
class Settings:
    """How the checkpointer connects: psycopg's ``conninfo`` and ``connect()`` arguments."""

    conninfo: Any
    kwargs: Any


def settings_of(saver: object) -> Settings | None:
    """The connection settings of a psycopg-backed checkpointer (``conn``), else ``None``."""
    conn = getattr(saver, "conn", None)
    if conn is None or "psycopg" not in sys.modules:
        return None
    import psycopg

    if isinstance(conn, psycopg.Connection | psycopg.AsyncConnection):
        password = conn.info.password
        return Settings(conn.info.dsn, {"password": password} if password else {})
    if "psycopg_pool" in sys.modules:
        import psycopg_pool

        if isinstance(conn, psycopg_pool.ConnectionPool | psycopg_pool.AsyncConnectionPool):
            return Settings(conn.conninfo, conn.kwargs)
    return None


def lock_key(thread: str) -> int:
    """The thread's advisory lock key: a stable signed 64-bit hash of its id."""
    digest = hashlib.blake2b(KEY_PREFIX + thread.encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


def _value(setting: Any) -> Any:
    """A setting, called when it is a callable (as the pool does for each connection)."""
    return setting() if callable(setting) else setting


def _connect_args(conninfo: Any, kwargs: Any) -> tuple[str, dict[str, Any]]:
    """``connect()``'s arguments: a transaction held open, rows as tuples, nothing prepared."""
    from psycopg.rows import tuple_row

    extra = {**(kwargs or {}), "autocommit": False, "row_factory": tuple_row}
    return conninfo or "", {**extra, "prepare_threshold": None}


def _sync_connect_args(settings: Settings) -> tuple[str, dict[str, Any]]:
    """The settings for a sync run; a pool's async callables cannot serve one.

    Raises:
        ConfigurationError: A setting is computed asynchronously.
    """
    conninfo, kwargs = _value(settings.conninfo), _value(settings.kwargs)
    for setting in (conninfo, kwargs):
        if inspect.iscoroutine(setting):
            setting.close()  # never awaited: no warning
            raise ConfigurationError(ASYNC_SETTINGS)
    return _connect_args(conninfo, kwargs)


async def _async_connect_args(settings: Settings) -> tuple[str, dict[str, Any]]:
    """The settings for an async run, awaited when a pool computes them asynchronously."""
    conninfo, kwargs = _value(settings.conninfo), _value(settings.kwargs)
    conninfo = await conninfo if inspect.isawaitable(conninfo) else conninfo
    kwargs = await kwargs if inspect.isawaitable(kwargs) else kwargs
    return _connect_args(conninfo, kwargs)


@contextmanager
def _database_errors(thread: str, password: str) -> Iterator[None]:
    """Errors of psycopg as :class:`DatabaseUnavailableError` (the password masked)."""
    import psycopg

    try:
        yield
    except psycopg.Error as exc:
        text = error_text(exc, password)
        raise DatabaseUnavailableError(UNREACHABLE.format(thread=thread, error=text)) from None


def _password(conninfo: str, kwargs: dict[str, Any]) -> str:
    """The password the settings carry, to mask in messages ("" when none)."""
    import psycopg
    from psycopg.conninfo import conninfo_to_dict

    found = kwargs.get("password")
    with suppress(psycopg.Error):  # an unparsable conninfo fails in connect(), said there
        found = found or conninfo_to_dict(conninfo).get("password")
    return str(found or "")


def _took(conn: Connection[Any], key: int) -> bool:
    """Whether this try took the lock (in the connection's open transaction)."""
    row = conn.execute(TRY, (key,)).fetchone()
    return bool(row and row[0])


@contextmanager
def holding_in_database(saver: object, thread: str, until: float, busy: Busy) -> Iterator[None]:
    """Hold ``thread`` in the checkpointer's PostgreSQL database for a sync run.

    Raises:
        Exception: ``busy()``'s error, when another process's run still holds the
            thread at ``until`` (``time.monotonic()``).
        DatabaseUnavailableError: The database cannot be reached.
    """
    settings = settings_of(saver)
    if settings is None:
        yield
        return
    import psycopg

    conninfo, kwargs = _sync_connect_args(settings)
    key, password = lock_key(thread), _password(conninfo, kwargs)
    with _database_errors(thread, password):
        conn = psycopg.Connection.connect(conninfo, **kwargs)
    try:
        with _database_errors(thread, password):
            conn.execute(NO_IDLE_TIMEOUT)
            while not _took(conn, key):
                if time.monotonic() >= until:
                    raise busy()
                time.sleep(DATABASE_POLL_S)
        yield
    finally:
        with suppress(psycopg.Error):  # a lost session released the lock already
            conn.rollback()  # releases it at once (closing alone: when the server sees it)
        conn.close()


async def _atook(conn: AsyncConnection[Any], key: int) -> bool:
    """Whether this try took the lock (in the connection's open transaction)."""
    row = await (await conn.execute(TRY, (key,))).fetchone()
    return bool(row and row[0])


@asynccontextmanager
async def aholding_in_database(
    saver: object, thread: str, until: float, busy: Busy
) -> AsyncIterator[None]:
    """Hold ``thread`` in the checkpointer's database for an async run (never blocks the loop).

    Raises:
        Exception: ``busy()``'s error, as in :func:`holding_in_database`.
        DatabaseUnavailableError: The database cannot be reached.
    """
    settings = settings_of(saver)
    if settings is None:
        yield
        return
    import psycopg

    conninfo, kwargs = await _async_connect_args(settings)
    key, password = lock_key(thread), _password(conninfo, kwargs)
    with _database_errors(thread, password):
        conn = await psycopg.AsyncConnection.connect(conninfo, **kwargs)
    try:
        with _database_errors(thread, password):
            await conn.execute(NO_IDLE_TIMEOUT)
            while not await _atook(conn, key):
                if time.monotonic() >= until:
                    raise busy()
                await asyncio.sleep(DATABASE_POLL_S)
        yield
    finally:
        with suppress(psycopg.Error):
            await conn.rollback()
        await conn.close()


def held_by_caller(key: Key) -> bool:
    """Whether the caller runs inside a hold of ``key``'s thread (its own run, ``reply``)."""
    return key in _HELD.get()


def held_in_database(saver: object, thread: str) -> bool:
    """Whether a run elsewhere holds ``thread`` in the checkpointer's PostgreSQL database (Q5).

    One try of the thread's advisory lock on a connection of its own, let go at once;
    ``False`` for a checkpointer that is not PostgreSQL.

    Raises:
        DatabaseUnavailableError: The database cannot be reached.
    """
    settings = settings_of(saver)
    if settings is None:
        return False
    import psycopg

    conninfo, kwargs = _sync_connect_args(settings)
    key, password = lock_key(thread), _password(conninfo, kwargs)
    with _database_errors(thread, password):
        conn = psycopg.Connection.connect(conninfo, **kwargs)
        try:
            return not _took(conn, key)
        finally:
            conn.rollback()  # a lock this try took goes at once
            conn.close()


async def aheld_in_database(saver: object, thread: str) -> bool:
    """Async :func:`held_in_database` (never blocks the loop)."""
    settings = settings_of(saver)
    if settings is None:
        return False
    import psycopg

    conninfo, kwargs = await _async_connect_args(settings)
    key, password = lock_key(thread), _password(conninfo, kwargs)
    with _database_errors(thread, password):
        conn = await psycopg.AsyncConnection.connect(conninfo, **kwargs)
        try:
            return not await _atook(conn, key)
        finally:
            await conn.rollback()
            await conn.close()


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

    def busy(self, key: Key) -> bool:
        """Whether a run of this process holds ``key``'s thread now (not the caller's own hold)."""
        if key in _HELD.get():
            return False
        with self._guard:
            found = self._locks.get(key)
        return found is not None and found.lock.locked()

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


@asynccontextmanager
async def aholding(
    locks: ThreadLocks, key: Key | None, wait_s: float, saver: object = None
) -> AsyncIterator[None]:
    """Hold ``key``'s thread for an async run, not blocking the loop; raises as :func:`holding`."""
    hold = _hold(locks, key, wait_s)
    if hold is None:
        yield
        return
    while not hold.entry.lock.acquire(blocking=False):  # by its deadline, the loop free
        if time.monotonic() >= hold.until:
            raise hold.busy()
        await asyncio.sleep(POLL_S)
    with _kept(hold.entry, hold.key):
        async with aholding_in_database(saver, hold.key[1], hold.until, hold.busy):
            yield
