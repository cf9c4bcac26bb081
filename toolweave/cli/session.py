"""Running turns for the command line: the graph, its checkpointer and the thread store."""

from __future__ import annotations

import logging
import os
import re
import sqlite3
from collections.abc import Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, TextIO

from langchain_core.messages import AIMessageChunk, HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.types import Command

from toolweave.cli import render
from toolweave.cli.render import PageReads, person_line, progress_line
from toolweave.graph.builder import build_graph, create_state_graph
from toolweave.graph.context import Limits, RunContext, own_language_of
from toolweave.graph.idempotency import repeats_the_last_question, stored_messages
from toolweave.graph.threads import ThreadStatus, require_interrupted, status_of, thread_status
from toolweave.graph.validation import question_of
from toolweave.llm.env import default_assistant, llm_timeout
from toolweave.llm.offline import OfflineAssistant
from toolweave.llm.passthrough import ANSWER_TAG
from toolweave.llm.port import CITATION
from toolweave.llm.retries import logger as retry_logger
from toolweave.pauses import cli_prompt, first_pause
from toolweave.persistence import SQLITE_SYNCHRONOUS_ENV, open_checkpointer
from toolweave.state.documents import as_sentences
from toolweave.state.errors import InvalidRequestError, UnknownThreadError
from toolweave.state.pauses import is_pause_payload
from toolweave.state.serde import checkpoint_serde
from toolweave.tools.domain import Domain
from toolweave.tools.language import detect_language
from toolweave.tools.registry import AnyTool
from toolweave.tools.texts import Texts, text_for

DB_NAME = "toolweave.db"  # the thread store inside the data directory
MAX_THREAD_ID = 128


def validate_message(message: str, limits: Limits | None = None) -> str:
    """The message stripped, or :class:`InvalidRequestError` as the graph would raise it (X1)."""
    return question_of([HumanMessage(content=message)], limits or Limits())


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


def thread_store(data_dir: Path, database_url: str | None) -> str | Path:
    """Where threads outlive the process: ``database_url``, else SQLite in the data directory."""
    return database_url or data_dir / DB_NAME


def _sqlite_env() -> dict[str, str]:
    """Only the SQLite durability level comes from the environment here."""
    synchronous = os.environ.get(SQLITE_SYNCHRONOUS_ENV)
    return {} if synchronous is None else {SQLITE_SYNCHRONOUS_ENV: synchronous}


def keep_thread(
    source: BaseCheckpointSaver[Any], thread_id: str, *, data_dir: Path, database_url: str | None
) -> None:
    """Copy a thread's checkpoints and pending writes from ``source`` to the thread store (Q2)."""
    config = _config(validate_thread_id(thread_id))
    with open_checkpointer(thread_store(data_dir, database_url), env=_sqlite_env()) as target:
        for saved in reversed(list(source.list(config))):  # oldest first, per namespace
            namespace = saved.config["configurable"].get("checkpoint_ns", "")
            first: RunnableConfig = {
                "configurable": {"thread_id": thread_id, "checkpoint_ns": namespace}
            }
            parent = saved.parent_config or first
            stored = target.put(
                parent, saved.checkpoint, saved.metadata, saved.checkpoint["channel_versions"]
            )
            by_task: dict[str, list[tuple[str, Any]]] = {}
            for task_id, channel, value in saved.pending_writes or ():
                by_task.setdefault(task_id, []).append((channel, value))
            for task_id, writes in by_task.items():
                target.put_writes(stored, writes, task_id)


KEEP_HINT = (  # a one-off question's thread is not stored
    "; `toolweave ask` keeps a thread only when it asks back: ask with `--thread ID` to keep it"
)


@contextmanager
def _stored(
    directory: Path, thread_id: str, database_url: str | None = None
) -> Iterator[tuple[BaseCheckpointSaver[Any], str]]:
    """The thread store opened read-only and the validated id; else :class:`UnknownThreadError`."""
    thread_id = validate_thread_id(thread_id)
    path = directory / DB_NAME
    where = "" if database_url else f" ({path})"
    unknown = UnknownThreadError(
        f"no conversation is stored under thread {thread_id!r}{where}{KEEP_HINT}"
    )
    if database_url:
        with open_checkpointer(database_url, env={}) as shared:
            if shared.get_tuple(_config(thread_id)) is None:
                raise unknown
            yield shared, thread_id
        return
    if not path.is_file():
        raise unknown
    from langgraph.checkpoint.sqlite import SqliteSaver  # only threads that outlive the run

    conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    try:
        saver = SqliteSaver(conn, serde=checkpoint_serde())
        saver.is_setup = True  # read-only: no CREATE, no PRAGMA
        try:
            found = saver.get_tuple(_config(thread_id))
        except sqlite3.DatabaseError as exc:
            raise unknown from exc
        if found is None:
            raise unknown
        yield saver, thread_id
    finally:
        conn.close()


def read_thread(
    directory: Path, thread_id: str, database_url: str | None = None
) -> tuple[dict[str, Any], ThreadStatus]:
    """A stored thread's latest state and status (Q5), read-only: any domain's wiring reads it."""
    with _stored(directory, thread_id, database_url) as (saver, thread):
        reader = create_state_graph(Domain(name="reader"), [], assistant=OfflineAssistant())
        snapshot = reader.compile(checkpointer=saver).get_state(_config(thread))
        return dict(snapshot.values), status_of(snapshot, thread)


RUN_TIMEOUT_REQUESTS = 10  # X5: a message's deadline in request timeouts (~2-12 calls, retries)


def default_run_timeout(request_timeout: float | None) -> float:
    """A run's default deadline: :data:`RUN_TIMEOUT_REQUESTS` request timeouts (600 s)."""
    return RUN_TIMEOUT_REQUESTS * llm_timeout(request_timeout, os.environ)


# Streamed text held back until more follows: citation markers alone (R9), or the start of
# the answer prompt written back (the answer node replaces both; the stored one is printed).
HELD_BACK = re.compile(r"[\s\[\]\d,;]*")
ECHO_START = re.compile(r"\s*(\[\d+\]\s|guaranteed context|context\s*:)", re.IGNORECASE)
ECHO_LABELS = ("guaranteed context", "context:")
NOT_KEPT = "↳ the answer (what streamed above was not kept):"  # a loop, a retried stream (X3)
LEFT_OUT = "↳ the answer, checked against its sources (what they do not hold is left out):"


def _held_back(text: str) -> bool:
    """Whether streamed ``text`` is held back, to be printed with the stored answer."""
    if HELD_BACK.fullmatch(text) or ECHO_START.match(text):
        return True
    head = text.lstrip().casefold()
    return any(label.startswith(head) for label in ECHO_LABELS)  # "Guar…" may be an echo


_MARKER = re.compile(r"[ \t]*" + CITATION.pattern)
_OPEN_MARKER = re.compile(r"[ \t]*\[[\d,;\s]*$")


def visible(text: str) -> str:
    """Streamed answer text as a person sees it: no citation marker, nor one still open (R9)."""
    return _OPEN_MARKER.sub("", _MARKER.sub("", text))


def _print_lines(
    lines: list[str | None], shown: list[str], out: TextIO | None, *, after_tokens: bool
) -> None:
    """Print the progress ``lines`` that differ from the last shown (on a new line after tokens)."""
    for line in lines:
        if out is not None and line is not None and line != shown[-1]:
            print(("\n" if after_tokens else "") + line, file=out, flush=True)
            shown.append(line)


def _print_tokens(tokens: Sequence[str], printed: int, out: TextIO) -> int:
    """Print the streamed answer's new text (trailing spaces wait); returns how much is printed."""
    raw = "".join(tokens)
    if not printed and _held_back(raw):
        return printed
    text = visible(raw).rstrip(" \t")
    print(text[printed:], end="", file=out, flush=True)
    return max(printed, len(text))


def _print_end(turn: Turn, printed: int, out: TextIO) -> None:
    """End the answer: the stored answer's rest, or all of it when it is not what streamed."""
    answer = str(turn.values.get("answer") or "")
    shown = visible(turn.streamed)[:printed].rstrip()
    if turn.pending_question is not None:
        if printed:
            print(file=out, flush=True)
        return
    if printed and answer.startswith(shown):
        rest = answer[len(shown) :].rstrip()
        if rest or not visible(turn.streamed)[:printed].endswith("\n"):  # a line to end
            print(rest, file=out, flush=True)  # "" ends the line
    elif printed:  # a loop, a stream that broke off: the reader is told which text counts
        dropped = any(not s.supported for s in as_sentences(turn.values.get("answer_sentences")))
        print("\n" + (LEFT_OUT if dropped else NOT_KEPT) + "\n" + answer, file=out, flush=True)
    elif answer:
        print(answer, file=out, flush=True)  # a finished answer nobody streamed (R3)


def _print_declined(turn: Turn, before: int, out: TextIO) -> None:
    """``-v``: the run's declined candidates per task (its ledger entries after ``before``)."""
    for line in render.declined_lines(list(turn.values.get("ledger") or [])[before:]):
        print(line, file=out, flush=True)


@dataclass
class Turn:
    """The outcome of one message on a thread."""

    values: dict[str, Any]  # the thread's state after the run
    streamed: str = ""  # answer text that reached the output as tokens
    pending_question: str | None = None  # the question the run paused on
    pending_choices: list[str] = field(default_factory=list)  # a reply may be a number (Q2)
    events: list[Any] = field(default_factory=list)  # the run's custom stream events
    asked_by: tuple[str, ...] = ()  # the tools whose question this message answered (Q2)


def _asking_tools(pending: Sequence[Any]) -> tuple[str, ...]:
    """The tools whose clarification questions ``pending`` interrupts hold (Q2, T4)."""
    return tuple(
        str(i.value.get("tool"))
        for i in pending
        if is_pause_payload(i.value) and i.value["type"] == "clarification" and i.value.get("tool")
    )


class Session:
    """One compiled graph over a domain and its checkpointer; a context manager (closes it)."""

    def __init__(
        self,
        domain: Domain,
        tools: Sequence[AnyTool],
        *,
        data_dir: Path | None,
        database_url: str | None = None,
        verbose: bool = False,
        run_timeout: float | None = None,
        user_data: Mapping[str, Any] | None = None,
    ) -> None:
        """Build the assistant (from the environment) and the graph; ``data_dir=None``: memory."""
        self.verbose = verbose
        self.client_tools = frozenset(t.name for t in tools if render.client_only(t))  # W3
        self.lang = domain.default_language
        self.own = own_language_of(domain, tools)  # T10: the domain's language, no kit's
        self.domain_name = domain.name
        self.texts = domain.texts
        self.assistant = default_assistant()
        self.context = (
            None
            if user_data is None
            else RunContext(user_data=user_data, secret_keys=frozenset(user_data))
        )
        deadline = run_timeout if run_timeout is not None else default_run_timeout(None)
        self._closer = ExitStack()
        target = None if data_dir is None else thread_store(data_dir, database_url)
        self.checkpointer = self._closer.enter_context(open_checkpointer(target, env=_sqlite_env()))
        try:
            self.graph = build_graph(
                domain, tools, assistant=self.assistant, checkpointer=self.checkpointer,
                limits=Limits(run_deadline_s=deadline), name=domain.name,
            )  # fmt: skip
        except BaseException:
            self._closer.close()
            raise

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        self._closer.close()

    def status(self, thread_id: str) -> ThreadStatus:
        """Where ``thread_id`` stands (Q5): new, finished, waiting or interrupted mid-run."""
        return thread_status(self.graph, _config(validate_thread_id(thread_id)))

    def finish_interrupted(self, *, thread_id: str, out: TextIO | None = None) -> Turn:
        """Finish the run that stopped mid-way on ``thread_id`` (Q5), streaming as :meth:`turn`."""
        config = _config(validate_thread_id(thread_id))
        require_interrupted(thread_status(self.graph, config))
        return self._run(None, config, out)

    def repeats_stopped_question(self, message: str | None, *, thread_id: str) -> bool:
        """Whether ``message`` is the stopped run's question (S5: finishing it answers it)."""
        if message is None:
            return False
        config = _config(validate_thread_id(thread_id))
        stored = stored_messages(self.graph.get_state(config).values)
        return repeats_the_last_question({"messages": [HumanMessage(content=message)]}, stored)

    def turn(
        self,
        message: str,
        *,
        thread_id: str,
        systems: Sequence[str] = (),
        out: TextIO | None = None,
    ) -> Turn:
        """Answer ``message`` on ``thread_id`` (Q2: an open question takes it); ``out``: stream."""
        config = _config(validate_thread_id(thread_id))
        self.lang = detect_language(message, self.own).lang or self.lang
        pending = self.graph.get_state(config).interrupts
        asked = all(
            is_pause_payload(i.value) and i.value["type"] == "clarification" for i in pending
        )
        run_input: Any = (
            Command(resume=message)
            if pending and not asked
            else {"messages": [HumanMessage(content=message)], "systems": list(systems)}
        )
        turn = self._run(run_input, config, out)
        turn.asked_by = _asking_tools(pending)
        return turn

    def _verbose_line(self, event: object) -> str | None:
        """The ``-v`` line of an event; a routed CLIENT tool is named as not run here (W3)."""
        line = progress_line(event)
        return None if line is None else line + render.client_note(event, self.client_tools)

    def _run(self, run_input: Any, config: RunnableConfig, out: TextIO | None) -> Turn:
        turn = Turn(values={})
        tokens: list[str] = []
        lang = self.lang
        shown: list[str] = [""]
        pages = PageReads()  # one line per page a search reads (P4)

        def show(events: list[object]) -> None:
            line = (
                self._verbose_line
                if self.verbose
                else partial(person_line, lang=lang, texts=self.texts)
            )
            lines = [line(e) for e in events]
            _print_lines(lines, shown, out, after_tokens=bool(tokens))

        printed = 0  # characters of the streamed answer printed so far
        before = len(self.graph.get_state(config).values.get("ledger") or [])
        parts: Iterator[Any] = self.graph.stream(
            run_input, config, context=self.context, stream_mode=["custom", "messages"]
        )
        with retries_shown(None if self.verbose else out, lang, self.texts):  # X5: a slow model
            for mode, data in parts:  # (mode, data) pairs: several modes were asked for
                if mode == "custom":
                    turn.events.append(data)
                    show(pages.feed(data))
                elif mode == "messages":
                    chunk, metadata = data
                    if isinstance(chunk, AIMessageChunk) and ANSWER_TAG in metadata.get("tags", ()):
                        show(pages.flush())
                        tokens.append(chunk.text)
                        if out is not None:
                            printed = _print_tokens(tokens, printed, out)
        show(pages.flush())
        snapshot = self.graph.get_state(config)
        turn.values = dict(snapshot.values)
        turn.streamed = "".join(tokens)
        if snapshot.interrupts:  # the question and choices shown for it (Q7)
            value = snapshot.interrupts[0].value
            pause = first_pause([value])
            turn.pending_question, turn.pending_choices = (
                (str(value), []) if pause is None else cli_prompt(pause)
            )
        if out is not None:
            _print_end(turn, printed, out)
            if self.verbose:  # A5, L1: what the routing said no to, and why
                _print_declined(turn, before, out)
        return turn


class _RetryLine(logging.Handler):
    """Prints, for the person waiting, that the model did not answer and is asked again."""

    def __init__(self, out: TextIO, lang: str, texts: Texts | None = None) -> None:
        super().__init__(logging.WARNING)
        self.out, self.lang, self.texts = out, lang, texts

    def emit(self, record: logging.LogRecord) -> None:
        """One line per retry; what failed stays with the developer (``-v``, X4)."""
        print(
            f"{render.BULLET} {text_for('model_retry', self.lang, self.texts)}",
            file=self.out,
        )
        self.out.flush()


@contextmanager
def retries_shown(out: TextIO | None, lang: str, texts: Texts | None = None) -> Iterator[None]:
    """While a run streams to ``out``: a line for the person each time the model is retried.

    The command line logs errors only without ``-v``, so a model that timed out and was
    asked again left the person a minute or more without a line. Only the retry's fact
    is shown, never the error's text; with ``-v`` (``out=None`` here) the warning itself is.
    """
    if out is None:
        yield
        return
    handler = _RetryLine(out, lang, texts)
    level, propagate = retry_logger.level, retry_logger.propagate
    retry_logger.addHandler(handler)
    retry_logger.setLevel(logging.WARNING)
    retry_logger.propagate = False  # not the developer's stderr line too
    try:
        yield
    finally:
        retry_logger.removeHandler(handler)
        retry_logger.setLevel(level)
        retry_logger.propagate = propagate
