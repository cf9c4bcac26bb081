"""Checkpoint bytes and resume latency over clarification rounds, SQLite and Postgres (Q3, B1).

A coordinator splits the root into 29 subtasks (30 tasks with the root), each
forcing one no-op tool; every fifth subtask's tool is clarifiable and asks
once, so a run pauses 5 times in a row. The start runs up to the first
question; round *k* resumes with ``Command(resume=...)`` and runs to the next
question (round 5: to the answer). Each round does the same amount of new work,
so the bytes a round writes must stay flat: the big channels (tasks, buffer,
documents, ledger) are ``DeltaChannel`` channels, stored as their writes, not
re-saved whole at every step. Prints a markdown table.

Postgres runs when ``TOOLWEAVE_DATABASE_URL`` or ``TOOLWEAVE_TEST_DATABASE_URL``
is set (``eval "$(bash scripts/postgres.sh start)"``).

Usage (from the repository root)::

    python -m bench.rounds            # 10 threads per backend, median latency
    python -m bench.rounds --quick    # 2 threads
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a file: make ``bench`` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from langgraph.types import Command

from bench.harness import make_noop_tool, markdown_table, question, tool_name
from bench.tree import TreeCoordinator
from toolweave import (
    ChatbotTool,
    ClarifiableTool,
    TaskInfo,
    ToolCallContext,
    ToolResult,
    UniqueTextDocument,
    build_graph,
)
from toolweave.persistence import open_checkpointer
from toolweave.testing import FunctionAssistant

SUBTASKS = 29
ASK_EVERY = 5
ROUNDS = SUBTASKS // ASK_EVERY
DOMAIN = "bench"
ENV_URLS = ("TOOLWEAVE_DATABASE_URL", "TOOLWEAVE_TEST_DATABASE_URL")

SQLITE_BYTES = """
SELECT (SELECT coalesce(sum(length(checkpoint) + length(metadata)), 0)
          FROM checkpoints WHERE thread_id = ?)
     + (SELECT coalesce(sum(length(value)), 0) FROM writes WHERE thread_id = ?),
       (SELECT count(*) FROM checkpoints WHERE thread_id = ?)
"""
POSTGRES_BYTES = """
SELECT (SELECT coalesce(sum(octet_length(checkpoint::text) + octet_length(metadata::text)), 0)
          FROM checkpoints WHERE thread_id = %(t)s)
     + (SELECT coalesce(sum(octet_length(blob)), 0) FROM checkpoint_blobs WHERE thread_id = %(t)s)
     + (SELECT coalesce(sum(octet_length(blob)), 0) FROM checkpoint_writes WHERE thread_id = %(t)s),
       (SELECT count(*) FROM checkpoints WHERE thread_id = %(t)s)
"""

Measure = Callable[[str], tuple[int, int]]
"""``measure(thread_id)`` → (stored bytes, stored checkpoints) of the thread."""


def ask_name(index: int) -> str:
    """The name of the ``index``-th clarifiable tool."""
    return f"ask_{index}"


class AskOnce(ClarifiableTool[Any]):
    """Asks one question, then returns one context document."""

    def __init__(self, name: str) -> None:
        """A clarifiable no-op tool called ``name``."""
        self.name = name  # type: ignore[misc]

    def execute(self, request: Any, ctx: ToolCallContext) -> ToolResult:
        """Ask which one."""
        return ToolResult.clarification(self.name, f"Which one for {self.name}?", ["a", "b"])

    def execute_with_clarification(
        self, request: Any, ctx: ToolCallContext, reply: str
    ) -> ToolResult:
        """Answer with one document naming the reply."""
        doc = UniqueTextDocument(
            document_id=f"{self.name}-doc",
            document_name=self.name,
            page=1,
            sentence_number=1,
            text=f"{self.name}: {reply}",
            sentence_score=1.0,
        )
        return ToolResult.as_context(self.name, [doc])


def subtask_tool(position: int) -> str:
    """The forced tool of subtask ``1.<position>``: every fifth one asks."""
    if position % ASK_EVERY == 0:
        return ask_name(position // ASK_EVERY - 1)
    return tool_name(position - 1 - position // ASK_EVERY)


def shape(root: TaskInfo) -> list[TaskInfo]:
    """29 subtasks of the root, each forcing one tool."""
    return [
        TaskInfo(
            task_no=f"1.{i}",
            task_prompt=f"{root.task_prompt} (part {i})",
            required_tool_names=[subtask_tool(i)],
        )
        for i in range(1, SUBTASKS + 1)
    ]


def rounds_graph(saver: Any) -> Any:
    """The 30-task graph over ``saver``."""
    plain = SUBTASKS - ROUNDS
    tools: list[ChatbotTool[Any]] = [
        *(make_noop_tool(tool_name(i), routable=False) for i in range(plain)),
        TreeCoordinator(shape),
    ]
    askers = [AskOnce(ask_name(i)) for i in range(ROUNDS)]
    return build_graph(
        DOMAIN,
        [*tools, *askers],
        assistant=FunctionAssistant(),
        checkpointer=saver,
        max_clarification_rounds=ROUNDS,
    )


def play(graph: Any, measure: Measure, thread: str) -> list[tuple[int, int, float, str]]:
    """One thread's start and rounds: (bytes written, checkpoints written, ms, outcome) each."""
    config = {"configurable": {"thread_id": thread}}
    rows: list[tuple[int, int, float, str]] = []
    before = measure(thread)
    run_input: Any = question("Tell me everything about the visit.")
    for _ in range(ROUNDS + 1):
        start = time.perf_counter()
        out = graph.invoke(run_input, config)
        elapsed = (time.perf_counter() - start) * 1000.0
        after = measure(thread)
        pending = out.get("__interrupt__")
        outcome = f"asks ({pending[0].value['tool']})" if pending else "answer"
        rows.append((after[0] - before[0], after[1] - before[1], elapsed, outcome))
        before = after
        run_input = Command(resume="a")
    expected = [f"asks ({ask_name(i)})" for i in range(ROUNDS)] + ["answer"]
    assert [outcome for *_, outcome in rows] == expected, rows
    return rows


def sqlite_measure(path: Path) -> Measure:
    """Bytes and checkpoints of a thread in the SQLite file (a separate reader)."""

    def measure(thread: str) -> tuple[int, int]:
        with sqlite3.connect(path) as conn:
            size, count = conn.execute(SQLITE_BYTES, (thread, thread, thread)).fetchone()
        return int(size), int(count)

    return measure


def postgres_measure(url: str) -> Measure:
    """Bytes and checkpoints of a thread in the Postgres tables."""
    import psycopg

    def measure(thread: str) -> tuple[int, int]:
        with psycopg.connect(url, autocommit=True) as conn:
            row = conn.execute(POSTGRES_BYTES, {"t": thread}).fetchone()
        assert row is not None
        return int(row[0]), int(row[1])

    return measure


def backend_rows(label: str, target: str, measure: Measure, threads: int) -> list[list[Any]]:
    """Play ``threads`` threads on one backend; one table row per round (median ms)."""
    with open_checkpointer(target, env={}) as saver:
        graph = rounds_graph(saver)
        play(graph, measure, f"warmup-{uuid.uuid4().hex[:8]}")
        runs = [play(graph, measure, f"rounds-{uuid.uuid4().hex[:8]}") for _ in range(threads)]
    rows: list[list[Any]] = []
    first_round = runs[0][1][0]
    for index in range(ROUNDS + 1):
        per_thread = [run[index] for run in runs]
        written, checkpoints, _, outcome = per_thread[0]
        latency = statistics.median(ms for _, _, ms, _ in per_thread)
        name = "start" if index == 0 else str(index)
        rows.append([label, name, outcome, checkpoints, written, written / first_round, latency])
    print(f"  played {threads} threads on {label}", file=sys.stderr, flush=True)
    return rows


def postgres_url() -> str | None:
    """The Postgres URL from the environment, if any."""
    for name in ENV_URLS:
        value = os.environ.get(name, "").strip()
        if value:
            return value
    return None


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """Command-line options."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--threads", type=int, default=None, help="threads per backend (10)")
    parser.add_argument("--quick", action="store_true", help="smoke run: 2 threads per backend")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> None:
    """Run the rounds on SQLite (and Postgres when configured) and print the table."""
    args = parse_args(argv)
    started = time.perf_counter()
    threads = args.threads or (2 if args.quick else 10)
    rows: list[list[Any]] = []
    with tempfile.TemporaryDirectory(prefix="toolweave-rounds-") as folder:
        path = Path(folder) / "rounds.db"
        rows += backend_rows("sqlite", str(path), sqlite_measure(path), threads)
    url = postgres_url()
    if url is not None:
        rows += backend_rows("postgres", url, postgres_measure(url), threads)
    print(
        f"## Clarification rounds: {SUBTASKS + 1} tasks, {ROUNDS} questions in a row "
        "(FunctionAssistant, no-op tools)\n"
    )
    headers = [
        "checkpointer",
        "round",
        "ends with",
        "checkpoints",
        "bytes written",
        "x round 1",
        "resume ms",
    ]
    print(markdown_table(headers, rows))
    print(
        "\nround = the start (first question up to the first pause) or the k-th "
        "`invoke(Command(resume=...))` up to the next pause or the answer; each does the same "
        "new work (about 5 subtasks). bytes written = growth of the thread's stored "
        "checkpoints and writes in that round (SQLite: length of checkpoint, metadata and "
        "write values; Postgres: octet_length of checkpoints, blobs and writes); x round 1 = "
        "those bytes over round 1's (flat = about 1; the last round also writes the answer "
        "and the nested task tree). resume ms = median wall time from `invoke` to its return "
        f"(the next pause or the answer) over {threads} threads, after a warm-up thread."
    )
    if url is None:
        print("\n_Postgres skipped: set TOOLWEAVE_DATABASE_URL or TOOLWEAVE_TEST_DATABASE_URL._")
    print(f"\n_total runtime: {time.perf_counter() - started:.1f} s_")


if __name__ == "__main__":
    main()
