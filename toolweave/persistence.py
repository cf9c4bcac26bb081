"""Checkpointers for durable threads (Q3): in memory, SQLite or PostgreSQL; passwords masked."""

from __future__ import annotations

import logging
import os
import sqlite3
from collections.abc import AsyncIterator, Iterator, Mapping
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver

from toolweave.state.errors import ConfigurationError, DatabaseUnavailableError
from toolweave.state.secrets import error_text
from toolweave.state.serde import checkpoint_serde

logger = logging.getLogger(__name__)

DATABASE_URL_ENV = "TOOLWEAVE_DATABASE_URL"  # the checkpoint database when no target is passed
SQLITE_SYNCHRONOUS_ENV = "TOOLWEAVE_SQLITE_SYNCHRONOUS"  # SQLite's level when none is passed
SqliteSynchronous = Literal["OFF", "NORMAL", "FULL", "EXTRA"]
SQLITE_SYNCHRONOUS_LEVELS: tuple[SqliteSynchronous, ...] = ("OFF", "NORMAL", "FULL", "EXTRA")
DEFAULT_SQLITE_SYNCHRONOUS: SqliteSynchronous = "NORMAL"
POSTGRES_SCHEMES = ("postgresql", "postgres")
SQLITE_PREFIX = "sqlite:///"
POOL_MAX_SIZE = 10  # connections a process may hold at once (one per running thread)
CONNECT_TIMEOUT_S = 10.0
SQLITE_BUSY_TIMEOUT_S = 30.0
CONNECTION_KWARGS: dict[str, Any] = {"autocommit": True, "prepare_threshold": 0}  # PostgresSaver's

UNKNOWN_SCHEME = (
    "unknown checkpoint database {url}: use postgresql://user:password@host:port/db, "
    "sqlite:///path/to/file.db, or a file path"
)
EMPTY_TARGET = "the checkpoint database target is empty"
UNKNOWN_SYNCHRONOUS = "unknown SQLite synchronous level {value!r}: use one of {levels}"
UNREACHABLE = "cannot connect to the checkpoint database {url}: {error}"
DOWN = "cannot connect to the database {url} (--database-url): {error}"


Kind = Literal["memory", "sqlite", "postgres"]
Location = str | os.PathLike[str] | None  # a URL or path; None: the environment's


@dataclass(frozen=True)
class Target:
    """Where checkpoints go, resolved from an argument or the environment."""

    kind: Kind
    location: str = ""  # the Postgres URL or the SQLite path

    def describe(self) -> str:
        """A printable name of the target, with any password masked."""
        if self.kind == "memory":
            return "memory"
        return mask_url(self.location) if self.kind == "postgres" else f"sqlite:{self.location}"


def data_dir(override: str | os.PathLike[str] | None = None) -> Path:
    """Where the CLI keeps data: ``override``, ``$TOOLWEAVE_DATA_DIR``, or the XDG data dir's."""
    if override:
        return Path(override).expanduser()
    explicit = os.environ.get("TOOLWEAVE_DATA_DIR", "").strip()
    if explicit:
        return Path(explicit).expanduser()
    xdg = os.environ.get("XDG_DATA_HOME", "").strip()
    base = Path(xdg).expanduser() if xdg else Path.home() / ".local" / "share"
    return base / "toolweave"


def mask_url(url: str) -> str:
    """``url`` with its password (user part or ``password=`` query) as ``***``; other text as is."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "<unparsable database URL>"
    netloc = parts.netloc
    if "@" in netloc:
        userinfo, host = netloc.rsplit("@", 1)
        if ":" in userinfo:
            netloc = f"{userinfo.split(':', 1)[0]}:***@{host}"
    query = parts.query
    if query:
        pairs = parse_qsl(query, keep_blank_values=True)
        query = urlencode([(k, "***" if k.lower() == "password" else v) for k, v in pairs])
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def resolve_target(target: Location = None, *, env: Mapping[str, str] = os.environ) -> Target:
    """Where checkpoints go: ``target``, else ``TOOLWEAVE_DATABASE_URL``."""
    if target is None:
        target = env.get(DATABASE_URL_ENV, "").strip() or None
        if target is None:
            return Target("memory")
    if isinstance(target, os.PathLike):
        return Target("sqlite", os.fspath(target))
    text = target.strip()
    if not text:
        raise ConfigurationError(EMPTY_TARGET)
    if text.startswith(SQLITE_PREFIX):
        return Target("sqlite", text[len(SQLITE_PREFIX) :])
    scheme, sep, _ = text.partition("://")
    if not sep:
        return Target("sqlite", text)
    if scheme.lower() in POSTGRES_SCHEMES:
        return Target("postgres", text)
    raise ConfigurationError(UNKNOWN_SCHEME.format(url=mask_url(text)))


def _sqlite_path(location: str) -> str:
    """The SQLite file to open, its folder created (``:memory:`` stays as is)."""
    if location == ":memory:":
        return location
    path = Path(location).expanduser()
    path.parent.mkdir(parents=True, exist_ok=True)
    return str(path)


def resolve_synchronous(
    value: str | None = None, *, env: Mapping[str, str] = os.environ
) -> SqliteSynchronous:
    """SQLite's ``synchronous``: ``value``, else the environment's, else ``NORMAL``."""
    text = (value if value is not None else env.get(SQLITE_SYNCHRONOUS_ENV, "")).strip().upper()
    if text and text not in SQLITE_SYNCHRONOUS_LEVELS:
        raise ConfigurationError(
            UNKNOWN_SYNCHRONOUS.format(value=text, levels=", ".join(SQLITE_SYNCHRONOUS_LEVELS))
        )
    return text or DEFAULT_SQLITE_SYNCHRONOUS


def require_reachable(target: Location, *, connect_timeout: float = CONNECT_TIMEOUT_S) -> None:
    """Raise :class:`DatabaseUnavailableError` (URL masked) when a Postgres ``target`` is down."""
    resolved = resolve_target(target, env={})
    if resolved.kind != "postgres":
        return
    import psycopg

    try:
        _probe(resolved, connect_timeout)
    except psycopg.Error as exc:
        raise _unreachable(resolved, exc, DOWN) from None


def _unreachable(
    target: Target, error: BaseException, template: str = UNREACHABLE
) -> DatabaseUnavailableError:
    text = error_text(error, urlsplit(target.location).password or "")
    return DatabaseUnavailableError(template.format(url=target.describe(), error=text))


def _probe(target: Target, timeout: float) -> None:
    """Connect once and close: a refused login fails with its reason (libpq: 2 s at least)."""
    import psycopg

    psycopg.Connection.connect(target.location, connect_timeout=max(2, round(timeout))).close()


def _pool(pool_class: Any, target: Target, name: str) -> Any:
    """A closed pool of ``pool_class``, sync or async: connection settings, size, health check."""
    from psycopg.rows import dict_row

    return pool_class(
        target.location, kwargs={**CONNECTION_KWARGS, "row_factory": dict_row}, min_size=1,
        max_size=POOL_MAX_SIZE, open=False, check=pool_class.check_connection, name=name,
    )  # fmt: skip


def _resolved(
    target: Location, env: Mapping[str, str], level: SqliteSynchronous | None, flavour: str
) -> tuple[Target, SqliteSynchronous]:
    """The target and the SQLite ``synchronous`` level both openers start from (logged)."""
    resolved = resolve_target(target, env=env)
    synchronous = resolve_synchronous(level, env=env)
    logger.debug("checkpoints in %s%s", resolved.describe(), flavour)
    return resolved, synchronous


@contextmanager
def open_checkpointer(
    target: str | os.PathLike[str] | None = None,
    *,
    env: Mapping[str, str] = os.environ,
    connect_timeout: float = CONNECT_TIMEOUT_S,
    sqlite_synchronous: SqliteSynchronous | None = None,
) -> Iterator[BaseCheckpointSaver[Any]]:
    """A checkpointer for ``target``, closed on exit.

    Args:
        target: A ``postgresql://`` URL, a ``sqlite:///`` URL or path, or ``None`` for
            ``TOOLWEAVE_DATABASE_URL`` (unset: in memory).
        env: The environment read when ``target`` is ``None``.
        connect_timeout: Seconds to wait for the first Postgres connection.
        sqlite_synchronous: SQLite's ``PRAGMA synchronous`` (``None``: the environment's, else
            ``NORMAL``: a crash loses nothing, a power cut may drop the last commits).

    Yields:
        A ready ``BaseCheckpointSaver`` with toolweave's serializer.

    Raises:
        ConfigurationError: Unknown URL scheme, empty target or unknown synchronous level.
        DatabaseUnavailableError: The Postgres server cannot be reached.
    """
    resolved, synchronous = _resolved(target, env, sqlite_synchronous, "")
    if resolved.kind == "memory":
        yield InMemorySaver(serde=checkpoint_serde())
    elif resolved.kind == "sqlite":
        from langgraph.checkpoint.sqlite import SqliteSaver

        location = _sqlite_path(resolved.location)
        conn = sqlite3.connect(location, check_same_thread=False, timeout=SQLITE_BUSY_TIMEOUT_S)
        conn.execute("PRAGMA journal_mode=WAL")  # readers do not block the writer
        conn.execute(f"PRAGMA synchronous={synchronous}")  # one of the fixed levels, no user text
        try:
            saver = SqliteSaver(conn, serde=checkpoint_serde())
            saver.setup()
            yield saver
        finally:
            conn.close()
    else:
        with _postgres_saver(resolved, connect_timeout) as pg_saver:
            yield pg_saver


@contextmanager
def _postgres_saver(target: Target, timeout: float) -> Iterator[BaseCheckpointSaver[Any]]:
    import psycopg
    from langgraph.checkpoint.postgres import PostgresSaver
    from psycopg_pool import ConnectionPool, PoolTimeout

    pool: ConnectionPool[Any] = _pool(ConnectionPool, target, "toolweave-checkpoints")
    try:
        _probe(target, timeout)  # a plain connection first: its reason, not a pool timeout
        pool.open(wait=True, timeout=timeout)
        saver = PostgresSaver(pool, serde=checkpoint_serde())
        saver.setup()  # idempotent: creates or migrates the tables
    except (PoolTimeout, psycopg.Error) as exc:
        pool.close()
        raise _unreachable(target, exc) from None
    try:
        yield saver
    finally:
        pool.close()


@asynccontextmanager
async def open_async_checkpointer(
    target: str | os.PathLike[str] | None = None,
    *,
    env: Mapping[str, str] = os.environ,
    connect_timeout: float = CONNECT_TIMEOUT_S,
    sqlite_synchronous: SqliteSynchronous | None = None,
) -> AsyncIterator[BaseCheckpointSaver[Any]]:
    """The asyncio twin of :func:`open_checkpointer` (same targets, errors and levels)."""
    resolved, synchronous = _resolved(target, env, sqlite_synchronous, " (async)")
    if resolved.kind == "memory":
        yield InMemorySaver(serde=checkpoint_serde())
    elif resolved.kind == "sqlite":
        import aiosqlite
        from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

        location = _sqlite_path(resolved.location)
        async with aiosqlite.connect(location, timeout=SQLITE_BUSY_TIMEOUT_S) as conn:
            await conn.execute("PRAGMA journal_mode=WAL")
            await conn.execute(f"PRAGMA synchronous={synchronous}")
            saver = AsyncSqliteSaver(conn, serde=checkpoint_serde())
            await saver.setup()
            yield saver
    else:
        async with _async_postgres_saver(resolved, connect_timeout) as pg_saver:
            yield pg_saver


@asynccontextmanager
async def _async_postgres_saver(
    target: Target, timeout: float
) -> AsyncIterator[BaseCheckpointSaver[Any]]:
    import psycopg
    from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
    from psycopg_pool import AsyncConnectionPool, PoolTimeout

    pool: AsyncConnectionPool[Any] = _pool(
        AsyncConnectionPool, target, "toolweave-checkpoints-async"
    )
    try:
        probe = await psycopg.AsyncConnection.connect(
            target.location, connect_timeout=max(2, round(timeout))
        )
        await probe.close()
        await pool.open(wait=True, timeout=timeout)
        saver = AsyncPostgresSaver(pool, serde=checkpoint_serde())
        await saver.setup()
    except (PoolTimeout, psycopg.Error) as exc:
        await pool.close()
        raise _unreachable(target, exc) from None
    try:
        yield saver
    finally:
        await pool.close()
