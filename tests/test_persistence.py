"""Q3, X1, X4: choosing the checkpointer, and bad replies that change no stored state."""

from __future__ import annotations

import asyncio
import socket
import sqlite3
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import psycopg
import pytest
from crash_worker import QUESTION, make_graph, run
from durable import target_for, thread_id
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite import SqliteSaver

from toolweave import (
    ConfigurationError,
    InvalidRequestError,
    NothingPendingError,
    UnknownThreadError,
    reply,
)
from toolweave.persistence import (
    DatabaseUnavailableError,
    Target,
    mask_url,
    open_async_checkpointer,
    open_checkpointer,
    resolve_target,
)

BACKENDS = ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]
PG = "postgresql://app:s3cret@db.example:5432/toolweave"


def _config(thread: str) -> Any:
    return {"configurable": {"thread_id": thread}}


def test_Q3_target_is_memory_without_argument_or_environment():
    assert resolve_target(None, env={}) == Target("memory")
    assert resolve_target(None, env={"TOOLWEAVE_DATABASE_URL": "  "}) == Target("memory")
    with open_checkpointer(None, env={}) as saver:
        assert isinstance(saver, InMemorySaver)


def test_Q3_environment_url_selects_postgres_and_an_argument_wins_over_it(tmp_path):
    env = {"TOOLWEAVE_DATABASE_URL": PG}
    assert resolve_target(None, env=env) == Target("postgres", PG)
    assert resolve_target("postgres://u@h/db", env={}).kind == "postgres"
    assert resolve_target(str(tmp_path / "x.db"), env=env) == Target(
        "sqlite", str(tmp_path / "x.db")
    )
    assert resolve_target(tmp_path / "y.db", env=env) == Target("sqlite", str(tmp_path / "y.db"))
    assert resolve_target("sqlite:///rel/t.db", env=env) == Target("sqlite", "rel/t.db")
    assert resolve_target("sqlite:////abs/t.db", env=env) == Target("sqlite", "/abs/t.db")


def test_X1_unknown_scheme_or_empty_target_is_a_configuration_error_without_the_password():
    with pytest.raises(ConfigurationError, match="unknown checkpoint database") as caught:
        resolve_target("mysql://root:hunter2@localhost/db")
    assert "hunter2" not in str(caught.value)
    assert "root:***@localhost" in str(caught.value)
    with pytest.raises(ConfigurationError):
        resolve_target("  ")
    with pytest.raises(ConfigurationError), open_checkpointer("redis://h:6379", env={}):
        pass


def test_X4_mask_url_hides_passwords_in_the_user_part_and_the_query():
    assert mask_url(PG) == "postgresql://app:***@db.example:5432/toolweave"
    assert "pw" not in mask_url("postgresql://h/db?user=a&password=pw")
    assert mask_url("postgresql://app@h/db") == "postgresql://app@h/db"
    assert Target("postgres", PG).describe() == "postgresql://app:***@db.example:5432/toolweave"


def test_X1_unreachable_postgres_is_a_clear_error_without_the_password():
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"postgresql://app:hunter2@127.0.0.1:{port}/db?connect_timeout=1"
    with (
        pytest.raises(DatabaseUnavailableError) as caught,
        open_checkpointer(url, env={}, connect_timeout=1.0),
    ):
        pass
    assert "hunter2" not in str(caught.value)
    assert "app:***@127.0.0.1" in str(caught.value)


def test_Q3_sqlite_target_is_wal_mode_and_shared_across_threads(tmp_path):
    path = tmp_path / "deep" / "threads.db"
    with open_checkpointer(f"sqlite:///{path}", env={}) as saver:
        assert isinstance(saver, SqliteSaver)
        assert saver.conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        graph = make_graph(saver, str(tmp_path / "calls.txt"))
        with ThreadPoolExecutor(max_workers=3) as pool:  # .result() re-raises a failure
            started = [
                pool.submit(run, graph, {"op": "start", "thread": f"t{n}", "text": QUESTION})
                for n in range(3)
            ]
            assert all(future.result()["pending"] for future in started)
    with open_checkpointer(path, env={}) as saver:  # reopened: the threads are stored
        graph = make_graph(saver, str(tmp_path / "calls.txt"))
        for n in range(3):
            assert run(graph, {"op": "state", "thread": f"t{n}"})["pending"][0]["task_no"] == "1.2"


def _row_counts(target: str) -> dict[str, int]:
    """Rows in every checkpoint table: a failed reply must not add one anywhere."""
    if target.startswith("postgresql://"):
        tables = ("checkpoints", "checkpoint_writes", "checkpoint_blobs")
        with psycopg.connect(target) as conn:
            return {t: conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in tables}
    with sqlite3.connect(target) as conn:
        return {
            t: conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
            for t in ("checkpoints", "writes")
        }


@pytest.mark.parametrize("backend", BACKENDS)
def test_X1_reply_to_unknown_thread_or_with_nothing_pending_changes_no_stored_state(
    backend, tmp_path
):
    target = target_for(backend, tmp_path)
    with open_checkpointer(target, env={}) as saver:
        graph = make_graph(saver, str(tmp_path / "calls.txt"))
        done, paused, nobody = (thread_id(p) for p in ("done", "paused", "nobody"))
        graph.invoke({"messages": [HumanMessage("Hello?")]}, _config(done))
        run(graph, {"op": "start", "thread": paused, "text": QUESTION})
        ids = {
            t: [c.config["configurable"]["checkpoint_id"] for c in saver.list(_config(t))]
            for t in (done, paused)
        }
        before = _row_counts(target)

        with pytest.raises(UnknownThreadError, match="no conversation is stored"):
            reply(graph, _config(nobody), "cardiology")
        with pytest.raises(NothingPendingError, match="not waiting for a reply"):
            reply(graph, _config(done), "cardiology")
        with pytest.raises(InvalidRequestError):
            reply(graph, _config(paused), "   ")

        assert saver.get_tuple(_config(nobody)) is None
        assert list(saver.list(_config(nobody))) == []
        after = {
            t: [c.config["configurable"]["checkpoint_id"] for c in saver.list(_config(t))]
            for t in (done, paused)
        }
        assert after == ids
        assert _row_counts(target) == before
        # the paused thread still takes its reply afterwards
        assert run(graph, {"op": "reply", "thread": paused, "text": "surgery"})["buffer"] == [
            "1.1:parking",
            "1.2:department_info",
        ]


async def _async_rounds(target: str, calls: Path) -> dict[str, Any]:
    async with open_async_checkpointer(target, env={}) as saver:
        graph = make_graph(saver, str(calls))
        config = _config(thread_id("async"))
        first = await graph.ainvoke({"messages": [HumanMessage(QUESTION)]}, config)
        assert first["__interrupt__"][0].value["tool"] == "department_info"
        await graph.ainvoke({"messages": [HumanMessage("cardiology")]}, config)
        return dict((await graph.aget_state(config)).values)


@pytest.mark.parametrize("backend", BACKENDS)
def test_Q3_async_checkpointer_pauses_and_resumes(backend, tmp_path):
    values = asyncio.run(_async_rounds(target_for(backend, tmp_path), tmp_path / "calls.txt"))
    assert sorted(values["context_buffer"]) == ["1.1:parking", "1.2:department_info"]


@pytest.mark.parametrize(
    ("argument", "env", "expected"),
    [
        (None, {}, 1),  # NORMAL: the default in WAL mode
        (None, {"TOOLWEAVE_SQLITE_SYNCHRONOUS": "full"}, 2),
        ("EXTRA", {"TOOLWEAVE_SQLITE_SYNCHRONOUS": "off"}, 3),  # the argument wins
    ],
)
def test_Q3_sqlite_synchronous_level_from_argument_or_environment(
    tmp_path, argument, env, expected
):
    target = str(tmp_path / "sync.db")
    with open_checkpointer(target, env=env, sqlite_synchronous=argument) as saver:
        assert isinstance(saver, SqliteSaver)
        assert saver.conn.execute("PRAGMA synchronous").fetchone()[0] == expected
        assert saver.conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_Q3_async_sqlite_checkpointer_applies_the_synchronous_level(tmp_path):
    async def level() -> int:
        target = str(tmp_path / "async-sync.db")
        env = {"TOOLWEAVE_SQLITE_SYNCHRONOUS": "FULL"}
        async with (
            open_async_checkpointer(target, env=env) as saver,
            saver.conn.execute("PRAGMA synchronous") as cursor,  # type: ignore[attr-defined]
        ):
            row = await cursor.fetchone()
        return int(row[0])

    assert asyncio.run(level()) == 2


def test_Q3_unknown_sqlite_synchronous_level_is_a_configuration_error(tmp_path):
    target = tmp_path / "never.db"
    with (
        pytest.raises(ConfigurationError, match="synchronous"),
        open_checkpointer(target, env={"TOOLWEAVE_SQLITE_SYNCHRONOUS": "fast; DROP"}),
    ):
        pass
    assert not target.exists()


def test_Q3_cli_thread_store_honours_the_synchronous_environment(tmp_path, monkeypatch):
    from toolweave.cli.session import DB_NAME, Session
    from toolweave_korhaz import korhaz_domain, korhaz_tools

    monkeypatch.setenv("TOOLWEAVE_SQLITE_SYNCHRONOUS", "nonsense")
    monkeypatch.delenv("TOOLWEAVE_DATABASE_URL", raising=False)
    with pytest.raises(ConfigurationError, match="synchronous"):
        Session(korhaz_domain(), korhaz_tools(), data_dir=tmp_path)
    assert not (tmp_path / DB_NAME).exists()
