"""Q3 through PostgreSQL: threads handed over between live processes, pooled connections.

Needs ``TOOLWEAVE_TEST_DATABASE_URL`` (``eval "$(bash scripts/postgres.sh start)"``);
without it these tests skip locally and fail under ``CI=true``.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest
from crash_worker import QUESTION, make_graph, run
from durable import Worker, postgres_url, read_calls, thread_id
from langgraph.checkpoint.postgres import PostgresSaver

from toolweave.persistence import open_checkpointer

ALL_FOUR = ["1.1:parking", "1.2:department_info", "1.3:doctor_finder", "1.4:pharmacy"]


def test_postgres_tests_fail_instead_of_skipping_in_ci(monkeypatch):
    monkeypatch.delenv("TOOLWEAVE_TEST_DATABASE_URL", raising=False)
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="must run in CI"):
        postgres_url()
    monkeypatch.setenv("CI", "")
    with pytest.raises(pytest.skip.Exception):
        postgres_url()


@pytest.mark.postgres
@pytest.mark.slow
def test_Q3_thread_paused_by_process_A_is_resumed_by_B_while_A_serves_other_threads(tmp_path):
    url = postgres_url()
    calls_file = tmp_path / "calls.txt"
    handed, kept, later = (thread_id(p) for p in ("handed", "kept", "later"))
    a = Worker(url, calls_file)
    b = Worker(url, calls_file)
    try:
        assert a.ask("start", handed, QUESTION)["pending"][0]["task_no"] == "1.2"
        assert a.ask("start", kept, QUESTION)["pending"][0]["task_no"] == "1.2"
        # B takes over `handed` while A answers on `kept`, at the same time
        b.send("reply", handed, "cardiology")
        a.send("reply", kept, "surgery")
        by_b, by_a = b.read(), a.read()
        assert [p["tool"] for p in by_b["pending"]] == ["doctor_finder"]
        assert [p["tool"] for p in by_a["pending"]] == ["doctor_finder"]
        # A sees B's progress on the shared database without being told
        assert a.ask("state", handed)["checkpoint_id"] == by_b["checkpoint_id"]
        b.send("message", handed, "Dr. Kovacs")
        a.send("reply", kept, "Dr. Nagy")
        by_b, by_a = b.read(), a.read()
        assert by_b["activated"] == ALL_FOUR
        assert by_a["activated"] == ALL_FOUR
        assert "Dr. Kovacs sees you" in by_b["answer"]
        assert "Dr. Nagy sees you" in by_a["answer"]
        # A is still serving after the hand-over; B gets a clear error for a finished thread
        assert a.alive()
        assert a.ask("start", later, QUESTION)["pending"][0]["tool"] == "department_info"
        assert b.ask("reply", handed, "again")["error"] == "NothingPendingError"
        assert b.ask("reply", thread_id("nobody"), "hi")["error"] == "UnknownThreadError"
    finally:
        a.close()
        b.close()
    handed_calls = read_calls(calls_file, handed)
    assert [pid for pid, _ in handed_calls] == [a.pid] * 3 + [b.pid] * 4
    assert len({call for _, call in handed_calls}) == len(handed_calls) == 7
    kept_calls = read_calls(calls_file, kept)
    assert {pid for pid, _ in kept_calls} == {a.pid}
    assert len(kept_calls) == 7


@pytest.mark.postgres
def test_Q3_one_process_runs_threads_concurrently_over_the_connection_pool(tmp_path):
    threads = [thread_id("pool") for _ in range(6)]
    with open_checkpointer(postgres_url(), env={}) as saver:
        assert isinstance(saver, PostgresSaver)
        graph = make_graph(saver, str(tmp_path / "calls.txt"))

        def rounds(thread: str) -> list[str]:
            run(graph, {"op": "start", "thread": thread, "text": QUESTION})
            run(graph, {"op": "reply", "thread": thread, "text": "cardiology"})
            return run(graph, {"op": "reply", "thread": thread, "text": "Dr. X"})["activated"]

        with ThreadPoolExecutor(max_workers=6) as pool:
            results = list(pool.map(rounds, threads))
    assert results == [ALL_FOUR] * len(threads)


@pytest.mark.postgres
def test_Q3_environment_selects_postgres_and_setup_is_idempotent(tmp_path):
    env = {"TOOLWEAVE_DATABASE_URL": postgres_url()}
    thread = thread_id("env")
    with open_checkpointer(env=env) as saver:
        assert isinstance(saver, PostgresSaver)
        run(
            make_graph(saver, str(tmp_path / "c.txt")),
            {"op": "start", "thread": thread, "text": QUESTION},
        )
    with open_checkpointer(env=env) as saver:  # setup() again on existing tables, state kept
        found = run(make_graph(saver, str(tmp_path / "c.txt")), {"op": "state", "thread": thread})
    assert found["buffer"] == ["1.1:parking"]


def test_Q3_cli_threads_follow_TOOLWEAVE_DATABASE_URL(monkeypatch, capsys, tmp_path):
    from toolweave.cli import main

    monkeypatch.setenv("TOOLWEAVE_DATABASE_URL", postgres_url())
    thread = thread_id("cli")
    assert main(["ask", "--data-dir", str(tmp_path), "--thread", thread, QUESTION]) == 0
    assert not any(tmp_path.iterdir())  # nothing went to the SQLite file
    capsys.readouterr()
    assert main(["explain", "--data-dir", str(tmp_path), thread]) == 0
    assert f"thread {thread}" in capsys.readouterr().out
    assert main(["explain", "--data-dir", str(tmp_path), thread_id("nobody")]) == 2
