"""One run at a time per thread across processes that share a PostgreSQL checkpointer (S5, Q6).

A transaction-level advisory lock on a connection of its own: it holds through PgBouncer.
"""

from __future__ import annotations

import asyncio
import hashlib
import inspect
import sys
import time
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager, suppress
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from toolweave.state.errors import ConfigurationError, DatabaseUnavailableError
from toolweave.state.secrets import error_text

if TYPE_CHECKING:
    from psycopg import AsyncConnection, Connection

POLL_S = 0.05
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
                time.sleep(POLL_S)
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
                await asyncio.sleep(POLL_S)
        yield
    finally:
        with suppress(psycopg.Error):
            await conn.rollback()
        await conn.close()
