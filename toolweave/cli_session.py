"""Running turns for the command line: the graph, its checkpointer and the thread store.

A :class:`Session` owns one compiled graph and its checkpointer: in memory for a
one-off question, SQLite under the user's data directory for a thread that must
outlive the process. :func:`read_thread` reads a stored thread without changing it.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator, Mapping, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any, TextIO

from langchain_core.messages import AIMessageChunk, HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.types import Command

from toolweave.cli_render import progress_line
from toolweave.graph import Limits, build_graph
from toolweave.graph.normalize import split_conversation
from toolweave.graph.stored_state import stored_values
from toolweave.llm.env import default_assistant
from toolweave.llm.passthrough import ANSWER_TAG
from toolweave.persistence import SQLITE_SYNCHRONOUS_ENV, open_checkpointer
from toolweave.state.errors import InvalidRequestError, UnknownThreadError
from toolweave.state.serde import checkpoint_serde
from toolweave.tools.domain import Domain
from toolweave.tools.registry import AnyTool

DB_NAME = "toolweave.db"
"""File name of the thread store inside the data directory."""
MAX_THREAD_ID = 128


def _sqlite_saver(conn: sqlite3.Connection) -> BaseCheckpointSaver[Any]:
    return SqliteSaver(conn, serde=checkpoint_serde())


def validate_message(message: str, limits: Limits | None = None) -> str:
    """The message stripped, or :class:`InvalidRequestError` as the graph would raise it (X1)."""
    question, _ = split_conversation([HumanMessage(content=message)], limits or Limits())
    return question


def validate_thread_id(thread_id: str) -> str:
    """A usable thread id, or :class:`InvalidRequestError`."""
    cleaned = thread_id.strip()
    if not cleaned or len(cleaned) > MAX_THREAD_ID or not cleaned.isprintable():
        raise InvalidRequestError(
            f"thread ids are 1-{MAX_THREAD_ID} printable characters, got {thread_id!r}"
        )
    return cleaned


def _config(thread_id: str) -> RunnableConfig:
    return {"configurable": {"thread_id": thread_id}}


def database_url() -> str | None:
    """``TOOLWEAVE_DATABASE_URL``: a database shared by several processes, or ``None``."""
    return os.environ.get("TOOLWEAVE_DATABASE_URL", "").strip() or None


def read_thread(directory: Path, thread_id: str) -> dict[str, Any]:
    """The state of a stored thread's latest checkpoint, read-only.

    Raises:
        UnknownThreadError: Nothing is stored under ``thread_id``.
    """
    thread_id = validate_thread_id(thread_id)
    url = database_url()
    if url:
        with open_checkpointer(url, env={}) as shared:
            stored = stored_values(shared, _config(thread_id))
        if stored is None:
            raise UnknownThreadError(f"no conversation is stored under thread {thread_id!r}")
        return stored
    path = directory / DB_NAME
    unknown = UnknownThreadError(f"no conversation is stored under thread {thread_id!r} ({path})")
    if not path.is_file():
        raise unknown
    conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    try:
        saver = _sqlite_saver(conn)
        saver.is_setup = True  # type: ignore[attr-defined]  # read-only: no CREATE, no PRAGMA
        found = stored_values(saver, _config(thread_id))
    except sqlite3.DatabaseError as exc:
        raise unknown from exc
    finally:
        conn.close()
    if found is None:
        raise unknown
    return found


@dataclass
class Turn:
    """The outcome of one message on a thread."""

    values: dict[str, Any]
    """The thread's state after the run."""
    streamed: str = ""
    """Answer text that reached the output as tokens."""
    pending_question: str | None = None
    """A question the run paused on (clarification), if it paused."""
    events: list[Any] = field(default_factory=list)
    """The custom stream events of the run."""


def _interrupt_text(value: Any) -> str:
    """The question of an interrupt payload (``{"question", "choices", ...}``), or its text."""
    if isinstance(value, Mapping) and isinstance(value.get("question"), str):
        choices = [str(choice) for choice in value.get("choices") or []]
        question = str(value["question"])
        return f"{question} ({' / '.join(choices)})" if choices else question
    return str(value)


class Session:
    """One compiled graph over a domain, with an in-memory or SQLite checkpointer.

    Use it as a context manager so that the SQLite connection is closed.
    """

    def __init__(self, domain: Domain, tools: Sequence[AnyTool], *, data_dir: Path | None) -> None:
        """Build the assistant (from the environment) and the graph.

        Args:
            domain: The domain to answer in.
            tools: Its tools.
            data_dir: Where the SQLite thread store lives; ``None`` keeps threads in memory.
        """
        self.assistant = default_assistant()
        self._closer = ExitStack()
        # a one-off question stays in memory (no environment lookup); a thread store is
        # TOOLWEAVE_DATABASE_URL when set (Postgres shared by several processes), else the
        # SQLite file under the data directory (toolweave.persistence)
        target = None if data_dir is None else database_url() or data_dir / DB_NAME
        # only the SQLite durability level comes from the environment here
        synchronous = os.environ.get(SQLITE_SYNCHRONOUS_ENV)
        env = {} if synchronous is None else {SQLITE_SYNCHRONOUS_ENV: synchronous}
        checkpointer = self._closer.enter_context(open_checkpointer(target, env=env))
        try:
            self.graph = build_graph(
                domain, tools, assistant=self.assistant, checkpointer=checkpointer, name=domain.name
            )
        except BaseException:
            self._closer.close()
            raise

    def __enter__(self) -> Session:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._closer.close()

    def turn(
        self,
        message: str,
        *,
        thread_id: str,
        systems: Sequence[str] = (),
        out: TextIO | None = None,
    ) -> Turn:
        """Answer ``message`` on ``thread_id``; with ``out``, stream progress and tokens to it.

        A thread paused on a question is resumed with ``message`` as the reply (Q2).
        """
        thread_id = validate_thread_id(thread_id)
        config = _config(thread_id)
        pending = self.graph.get_state(config).interrupts
        run_input: Any = (
            Command(resume=message)
            if pending
            else {"messages": [HumanMessage(content=message)], "systems": list(systems)}
        )
        turn = Turn(values={})
        tokens: list[str] = []
        parts: Iterator[Any] = self.graph.stream(
            run_input, config, stream_mode=["custom", "messages"]
        )
        for mode, data in parts:  # (mode, data) pairs: several modes were asked for
            if mode == "custom":
                turn.events.append(data)
                line = progress_line(data)
                if out is not None and line is not None:
                    print(("\n" if tokens else "") + line, file=out, flush=True)
            elif mode == "messages":
                chunk, metadata = data
                if isinstance(chunk, AIMessageChunk) and ANSWER_TAG in metadata.get("tags", ()):
                    tokens.append(chunk.text)
                    if out is not None:
                        print(chunk.text, end="", file=out, flush=True)
        snapshot = self.graph.get_state(config)
        turn.values = dict(snapshot.values)
        turn.streamed = "".join(tokens)
        if snapshot.interrupts:
            turn.pending_question = _interrupt_text(snapshot.interrupts[0].value)
        if out is not None:
            answer = turn.values.get("answer")
            if turn.streamed:
                print(file=out, flush=True)  # end the line of streamed tokens
            elif answer and turn.pending_question is None:
                print(answer, file=out, flush=True)  # a finished answer nobody streamed (R3)
        return turn
