"""S5, Q6 across processes: runs of one thread take turns over a shared PostgreSQL.

Two OS processes embed the compiled graph over one PostgreSQL checkpointer, as the
workers of a web app do (``tests/thread_lock_worker.py``). The same message reaches
both at once: its side-effecting tool must act once, and a process that waits past
``Limits.thread_wait_s`` for the other's run must get ``ThreadBusyError`` with
nothing stored. Needs ``TOOLWEAVE_TEST_DATABASE_URL``
(``eval "$(bash scripts/postgres.sh start)"``); skips without it, fails under ``CI=true``.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from durable import Worker, postgres_url, thread_id
from langchain_core.messages import HumanMessage
from thread_lock_worker import QUESTION, OpenTicket, make_graph

from toolweave import ConfigurationError, DatabaseUnavailableError, ThreadBusyError
from toolweave.graph.run_lock import holding_in_database
from toolweave.persistence import open_async_checkpointer, open_checkpointer
from toolweave.state.serde import checkpoint_serde

WORKER = Path(__file__).with_name("thread_lock_worker.py")
HOLD_S = 2.0
"""How long the first process's run stays in its tool (the second arrives meanwhile)."""
LONG_WAIT_S = 60.0
SHORT_WAIT_S = 0.5
ENTERED_TIMEOUT_S = 60.0


def _effects(path: Path) -> list[tuple[int, str]]:
    """The ``(pid, idempotency key)`` of every time the tool acted."""
    if not path.exists():
        return []
    return [
        (int(pid), key)
        for pid, key in (line.split(" ", 1) for line in path.read_text().splitlines())
    ]


def _wait_for_effect(path: Path) -> None:
    """Until the first process is inside its tool (its run holds the thread)."""
    until = time.monotonic() + ENTERED_TIMEOUT_S
    while not _effects(path):
        assert time.monotonic() < until, "the first run never reached its tool"
        time.sleep(0.02)


def _workers(url: str, effects: Path, mode: str, waits: tuple[float, float]) -> Iterator[Worker]:
    return (
        Worker(url, effects, script=WORKER, args=(str(HOLD_S), str(wait), mode)) for wait in waits
    )


@pytest.mark.postgres
@pytest.mark.parametrize("mode", ["sync", "async"])
def test_S5_Q6_one_message_sent_to_two_processes_at_once_acts_once(
    tmp_path: Path, mode: str
) -> None:
    url = postgres_url()
    effects = tmp_path / "effects.txt"
    thread = thread_id("two-processes")
    a, b = _workers(url, effects, mode, (LONG_WAIT_S, LONG_WAIT_S))
    try:
        a.send("send", thread, "client-msg-1")
        _wait_for_effect(effects)
        b.send("send", thread, "client-msg-1")  # the double submit, to another worker
        first, second = a.read(), b.read()
        stored = b.ask("state", thread)
    finally:
        a.close()
        b.close()
    assert len(_effects(effects)) == 1, _effects(effects)
    assert _effects(effects)[0][0] == a.pid
    assert first["answer"] == second["answer"]
    assert f"Ticket by {a.pid} opened." in first["answer"]
    assert second["seconds"] > HOLD_S / 2  # b waited for a's run, then read its answer
    assert [kind for kind, _ in stored["messages"]].count("human") == 1


@pytest.mark.postgres
def test_S5_Q6_a_process_waiting_past_thread_wait_s_is_refused_and_stores_nothing(
    tmp_path: Path,
) -> None:
    url = postgres_url()
    effects = tmp_path / "effects.txt"
    thread = thread_id("busy")
    a, b = _workers(url, effects, "sync", (LONG_WAIT_S, SHORT_WAIT_S))
    try:
        a.send("send", thread, "client-msg-1")
        _wait_for_effect(effects)
        before = b.ask("state", thread)
        refused = b.ask("send", thread, "client-msg-2")
        during = b.ask("state", thread)
        finished = a.read()
        after = b.ask("state", thread)
    finally:
        a.close()
        b.close()
    assert refused["error"] == "ThreadBusyError"
    assert SHORT_WAIT_S <= refused["seconds"] < HOLD_S  # bounded by b's own wait
    # the refused run stored nothing: no message of its own; the checkpoint count is not
    # compared, since the holding run's earlier steps may still be saved in the background
    # (durability "async") while b waits, which under load lands between the two reads
    assert during["messages"] == before["messages"]
    assert "client-msg-2" not in str(during)
    assert f"Ticket by {a.pid} opened." in finished["answer"]
    assert [mid for kind, mid in after["messages"] if kind == "human"] == ["client-msg-1"]
    assert [pid for pid, _ in _effects(effects)] == [a.pid]


@pytest.mark.postgres
def test_S5_Q6_a_process_killed_mid_run_leaves_its_thread_to_the_next(tmp_path: Path) -> None:
    """SIGKILL ends its session: the server releases the lock, another process goes on."""
    url = postgres_url()
    effects = tmp_path / "effects.txt"
    thread = thread_id("killed")
    a = Worker(url, effects, script=WORKER, args=("60", str(LONG_WAIT_S), "sync"))
    b = Worker(url, effects, script=WORKER, args=("0", "10", "sync"))
    try:
        a.send("send", thread, "client-msg-1")
        _wait_for_effect(effects)
        a.kill()
        finished = b.ask("send", thread, "client-msg-1")
    finally:
        a.close()
        b.close()
    assert f"Ticket by {b.pid} opened." in finished["answer"]  # not ThreadBusyError
    (by_a, key_a), (by_b, key_b) = _effects(effects)
    assert (by_a, by_b) == (a.pid, b.pid)
    assert key_a == key_b  # the killed step again, with its key (Q6, at least once)


@contextmanager
def _saver(kind: str) -> Iterator[Any]:
    """A saver over a connection pool (``open_checkpointer``) or over one connection."""
    if kind == "pool":
        with open_checkpointer(postgres_url(), env={}) as saver:
            yield saver
        return
    import psycopg
    from langgraph.checkpoint.postgres import PostgresSaver
    from psycopg.rows import dict_row

    with psycopg.Connection.connect(
        postgres_url(), autocommit=True, prepare_threshold=0, row_factory=dict_row
    ) as conn:
        yield PostgresSaver(conn, serde=checkpoint_serde())


@pytest.mark.postgres
@pytest.mark.parametrize("kind", ["pool", "connection"])
def test_S5_Q6_two_graphs_in_one_process_over_one_postgres_take_turns(
    tmp_path: Path, kind: str
) -> None:
    """Graphs built apart share no in-process lock: the database lock serialises them too."""
    effects = tmp_path / "effects.txt"
    thread = thread_id("two-graphs")
    config = {"configurable": {"thread_id": thread}}
    message = {"messages": [HumanMessage(QUESTION, id="client-msg-1")]}
    answers: list[str] = []
    with _saver(kind) as saver:
        graphs = [make_graph(saver, effects, 0.5, LONG_WAIT_S) for _ in range(2)]
        runs = [
            threading.Thread(target=lambda g=g: answers.append(g.invoke(message, config)["answer"]))
            for g in graphs
        ]
        for run in runs:
            run.start()
        for run in runs:
            run.join(timeout=60)
    assert len(answers) == 2
    assert len(_effects(effects)) == 1


@pytest.mark.postgres
def test_S5_Q6_an_async_run_waits_for_the_database_lock_without_blocking_the_loop(
    tmp_path: Path,
) -> None:
    effects = tmp_path / "effects.txt"
    thread = thread_id("async-loop")
    config = {"configurable": {"thread_id": thread}}

    async def scenario() -> tuple[int, type[BaseException] | None]:
        async with open_async_checkpointer(postgres_url(), env={}) as saver:
            holder = make_graph(saver, effects, 1.0, LONG_WAIT_S)
            waiter = make_graph(saver, effects, 1.0, 0.3)
            first = asyncio.create_task(
                holder.ainvoke({"messages": [HumanMessage(QUESTION, id="m1")]}, config)
            )
            while not _effects(effects):
                await asyncio.sleep(0.01)
            ticks = 0

            async def tick() -> None:
                nonlocal ticks
                while True:
                    ticks += 1
                    await asyncio.sleep(0.01)

            ticker = asyncio.create_task(tick())
            error: type[BaseException] | None = None
            try:
                await waiter.ainvoke({"messages": [HumanMessage("Another?", id="m2")]}, config)
            except ThreadBusyError as exc:
                error = type(exc)
            ticker.cancel()
            await first
            return ticks, error

    ticks, error = asyncio.run(scenario())
    assert error is ThreadBusyError
    assert ticks >= 10  # the loop kept running while the refused run waited 0.3 s
    assert len(_effects(effects)) == 1


def test_S5_Q6_X4_an_unreachable_lock_database_is_a_typed_error_without_the_password(
    tmp_path: Path,
) -> None:
    """No PostgreSQL needed: the saver's pool is never opened, the lock's connect fails."""
    from langgraph.checkpoint.postgres import PostgresSaver
    from psycopg_pool import ConnectionPool

    secret = "s3cret-pw"
    pool: ConnectionPool[Any] = ConnectionPool(
        f"postgresql://app:{secret}@127.0.0.1:1/db?connect_timeout=2", open=False
    )
    graph = make_graph(PostgresSaver(pool), tmp_path / "effects.txt", 0.0, LONG_WAIT_S)
    config = {"configurable": {"thread_id": "unreachable"}}
    with pytest.raises(DatabaseUnavailableError, match="cannot hold thread 'unreachable'") as err:
        graph.invoke({"messages": [HumanMessage(QUESTION)]}, config)
    assert secret not in str(err.value)
    assert not (tmp_path / "effects.txt").exists()


def test_S5_Q6_a_sync_run_refuses_a_pool_whose_settings_are_async() -> None:
    """A sync run cannot compute them: it says so instead of running unlocked."""
    from psycopg_pool import AsyncConnectionPool

    async def conninfo() -> str:
        return "postgresql://app@127.0.0.1:1/db"

    saver = SimpleNamespace(conn=AsyncConnectionPool(conninfo, open=False))
    with (
        pytest.raises(ConfigurationError, match="ainvoke"),
        holding_in_database(saver, "t", time.monotonic() + 1, RuntimeError),
    ):
        pass


def test_S5_Q6_the_ticket_tool_of_the_worker_acts_on_every_call(tmp_path: Path) -> None:
    """The worker's tool does not dedupe: a second act would be seen in its file."""
    effects = tmp_path / "effects.txt"
    with open_checkpointer(None, env={}) as saver:
        graph = make_graph(saver, effects, 0.0, LONG_WAIT_S)
        for n in range(2):
            config = {"configurable": {"thread_id": f"t{n}"}}
            graph.invoke({"messages": [HumanMessage(QUESTION, id="same")]}, config)
    assert len(_effects(effects)) == 2
    assert OpenTicket.side_effects


@pytest.mark.postgres
@pytest.mark.parametrize("mode", ["sync", "async"])
def test_Q5_a_run_of_another_process_in_flight_is_running_not_interrupted(
    tmp_path: Path, mode: str
) -> None:
    """Its checkpoints look like a run cut mid-way; the database lock tells them apart.

    Two graphs built apart share no in-process lock, as two processes do; the second
    asks the thread's status while the first's run is inside its tool.
    """
    from toolweave import ThreadStatusKind, athread_status, thread_status

    effects = tmp_path / "effects.txt"
    thread = thread_id(f"status-{mode}")
    config = {"configurable": {"thread_id": thread}}
    message = {"messages": [HumanMessage(QUESTION, id="client-msg-1")]}

    async def status_of(graph: Any) -> ThreadStatusKind:
        if mode == "async":
            return (await athread_status(graph, thread)).kind
        return thread_status(graph, thread).kind

    async def scenario() -> tuple[ThreadStatusKind, ThreadStatusKind]:
        async with open_async_checkpointer(postgres_url(), env={}) as saver:
            runner, asker = (make_graph(saver, effects, 1.5, LONG_WAIT_S) for _ in range(2))
            first = asyncio.create_task(runner.ainvoke(message, config))
            while not _effects(effects):
                await asyncio.sleep(0.02)
            during = await status_of(asker)
            await first
            return during, await status_of(asker)

    if mode == "async":
        during, after = asyncio.run(scenario())
    else:
        with open_checkpointer(postgres_url(), env={}) as saver:
            runner, asker = (make_graph(saver, effects, 1.5, LONG_WAIT_S) for _ in range(2))
            run = threading.Thread(target=lambda: runner.invoke(message, config))
            run.start()
            _wait_for_effect(effects)
            during = asyncio.run(status_of(asker))
            run.join(timeout=60)
            after = asyncio.run(status_of(asker))
    assert during is ThreadStatusKind.RUNNING
    assert after is ThreadStatusKind.FINISHED
