"""Q3, Q4: a paused run survives SIGKILL and resumes in fresh processes (SQLite and Postgres).

Each round runs in its own ``crash_worker.py`` process, killed with SIGKILL while
still alive right after the run paused. Every tool and coordinator call lands in
a file, so the test sees what ran, where, and that nothing ran twice.
"""

from __future__ import annotations

import signal
from pathlib import Path
from typing import Any

import pytest
from crash_worker import QUESTION, make_graph, run
from durable import Worker, read_calls, target_for, thread_id

from toolweave.persistence import open_checkpointer

BACKENDS = ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]
CHOICES = ["cardiology", "surgery"]
PRIOR = "1.1:parking,1.2:department_info"
EXPECTED_CALLS = [
    "coordinator planner@1",
    "tool parking@1.1",
    "tool department_info@1.2",
    "reply department_info@1.2:cardiology",
    f"tool doctor_finder@1.3:{PRIOR}",
    f"reply doctor_finder@1.3:Dr. Kovacs:{PRIOR}",
    "tool pharmacy@1.4",
]
VOLATILE = ("pid", "checkpoint_id")


def _facts(described: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in described.items() if k not in VOLATILE}


def _uninterrupted(tmp_path: Path) -> dict[str, Any]:
    """The same three rounds in one process, in memory: what the crashes must not change."""
    with open_checkpointer(None, env={}) as saver:
        graph = make_graph(saver, str(tmp_path / "baseline-calls.txt"))
        run(graph, {"op": "start", "thread": "base", "text": QUESTION})
        run(graph, {"op": "reply", "thread": "base", "text": "cardiology"})
        return _facts(run(graph, {"op": "message", "thread": "base", "text": "Dr. Kovacs"}))


@pytest.mark.slow
@pytest.mark.parametrize("backend", BACKENDS)
def test_Q3_Q4_paused_run_survives_sigkill_and_resumes_in_fresh_processes(backend, tmp_path):
    target = target_for(backend, tmp_path)
    calls_file = tmp_path / "calls.txt"
    thread = thread_id(f"crash-{backend}")

    first = Worker(target, calls_file)
    try:
        paused = first.ask("start", thread, QUESTION)
        assert paused["pending"] == [
            {
                "type": "clarification",
                "question": "Which department?",
                "choices": CHOICES,
                "tool": "department_info",
                "task_no": "1.2",
            }
        ]
        assert first.alive()
        assert first.kill() == -signal.SIGKILL
    finally:
        first.close()

    second = Worker(target, calls_file)
    try:
        found = second.ask("state", thread)
        # Q3: the fresh process finds the tree, the buffer and the applied coordinators intact
        assert _facts(found) == _facts(paused)
        assert found["checkpoint_id"] == paused["checkpoint_id"]
        assert found["tasks"] == ["1", "1.1", "1.2", "1.3", "1.4"]
        assert found["applied"]["1"] == ["planner"]
        assert found["buffer"] == ["1.1:parking"]
        assert found["queues"]["1.2"] == ["department_info"]
        again = second.ask("reply", thread, "cardiology")
        assert [p["question"] for p in again["pending"]] == ["Which doctor?"]
        assert again["buffer"] == ["1.1:parking", "1.2:department_info"]
        assert second.alive()
        assert second.kill() == -signal.SIGKILL
    finally:
        second.close()

    third = Worker(target, calls_file)
    try:
        done = third.ask("message", thread, "Dr. Kovacs")  # Q2: the next message is the reply
    finally:
        third.close()
    assert done["pending"] == []
    assert done["activated"] == [
        "1.1:parking",
        "1.2:department_info",
        "1.3:doctor_finder",
        "1.4:pharmacy",
    ]
    assert "Dr. Kovacs sees you" in done["answer"]
    # Q4: every tool and coordinator ran exactly once overall, in the process of its round
    calls = read_calls(calls_file, thread)
    assert [call for _, call in calls] == EXPECTED_CALLS
    assert [pid for pid, _ in calls] == [first.pid] * 3 + [second.pid] * 2 + [third.pid] * 2
    # ... and the result (including LLM calls spent) equals one uninterrupted process's
    assert _facts(done) == _uninterrupted(tmp_path)
