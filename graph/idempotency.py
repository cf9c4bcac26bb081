"""Q6: the stable idempotency key of one tool call; what repeats and amendments keep (S5, Q2)."""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langgraph.config import get_config

from toolweave.graph.langgraph_private import checkpointer_of
from toolweave.graph.walk import NEW_TURN
from toolweave.llm.next_message import next_message_kind
from toolweave.state.documents import MESSAGE_DOMAIN_KEY, MESSAGE_SOURCES_KEY, as_sources
from toolweave.state.errors import InvalidRequestError
from toolweave.state.events import EVENT_VERSION, SentAgainEvent
from toolweave.state.graph_state import ActedCall
from toolweave.state.ledger import LedgerEntry, LedgerKind
from toolweave.state.pauses import Clarification, awaiting, pause_of
from toolweave.state.run_scope import current_scope
from toolweave.state.task import completion_key
from toolweave.tools.texts import Texts, text_for

logger = logging.getLogger(__name__)

KEY_VERSION = "tw1"
"""Bumped if the derivation ever changes, so old and new keys never collide."""


def _last_human(messages: Sequence[Any]) -> HumanMessage | None:
    """The last human message of ``messages``, if any."""
    return next((m for m in reversed(messages) if isinstance(m, HumanMessage)), None)


def latest_human_message_id(messages: Sequence[BaseMessage]) -> str:
    """The id of the last human message (the run's or round's message), or ``""``."""
    last = _last_human(messages)
    return "" if last is None else last.id or ""


def request_message_id(messages: Sequence[BaseMessage]) -> str:
    """The id of the message whose request the run serves (S5, Q6).

    The last human message's, or when the human messages right before it have its words, the
    first of them's: a request sent again after its call failed is retried under its first
    key, so a service that dedupes on the key acts once even if the failed call went through.
    """
    humans = [m for m in messages if isinstance(m, HumanMessage)]
    if not humans:
        return ""
    first = humans[-1]
    for earlier in reversed(humans[:-1]):
        if not same_words(earlier.text, first.text):
            break
        first = earlier
    return first.id or ""


def idempotency_key(
    *, thread_id: str, message_id: str, task_no: str, tool: str, clarification_round: int
) -> str:
    """The key of one tool call: ``"tw1-"`` and 28 hex digits, the same for the same parts."""
    parts = [KEY_VERSION, thread_id, message_id, task_no, tool, clarification_round]
    digest = hashlib.sha256(json.dumps(parts, ensure_ascii=False).encode("utf-8")).hexdigest()
    return f"{KEY_VERSION}-{digest[:28]}"


def tool_call_key(state: Mapping[str, Any], task_no: str, tool: str) -> str:
    """The idempotency key of ``tool`` on ``task_no`` in ``state``'s run, inside a node (Q6)."""
    configurable = get_config().get("configurable") or {}
    return idempotency_key(
        thread_id=str(configurable.get("thread_id") or ""),
        message_id=request_message_id(state.get("messages") or ()),
        task_no=task_no,
        tool=tool,
        clarification_round=int(state.get("clarification_rounds") or 0),
    )


EDITED_MESSAGE = (
    "message {id!r} is already in the thread with other text: a message the thread holds "
    "cannot be changed; send a new message (a new id, or none) instead"
)


def stored_messages(values: Mapping[str, Any] | None) -> Sequence[BaseMessage]:
    """The messages a thread's stored channel values (or state values) hold."""
    messages = (values or {}).get("messages")
    return messages if isinstance(messages, Sequence) else ()


def carries_ids(checked: Any) -> bool:
    """Whether every message of a message input carries its own id (a re-send may)."""
    messages = _input_messages(checked)
    return bool(messages) and all(getattr(message, "id", None) for message in messages)


def _input_messages(checked: Any) -> Sequence[Any]:
    """The messages of a checked message input; none for another input."""
    return stored_messages(checked if isinstance(checked, Mapping) else None)


def is_resend(checked: Any, stored: Sequence[BaseMessage]) -> bool:
    """Whether a message input only repeats messages (same ids, same texts) the thread holds (S5).

    Raises:
        InvalidRequestError: A message has a stored id but other text (nothing is written, X5).
    """
    messages = _input_messages(checked)
    if not messages or not stored:
        return False
    by_id = {message.id: message for message in stored if message.id}
    known = [
        by_id.get(message.id or "") if isinstance(message, BaseMessage) else None
        for message in messages
    ]
    if any(found is None for found in known):
        return False  # a new message among them: a new request (the others as they are)
    for message, found in zip(messages, known, strict=True):
        if found is not None and found.text != message.text:
            raise InvalidRequestError(EDITED_MESSAGE.format(id=message.id))
    return True


def repeats_the_last_question(checked: Any, stored: Sequence[BaseMessage]) -> bool:
    """Whether a message input is one human message with the text of the last stored one (S5)."""
    if not one_human_message(checked):
        return False
    last = _last_human(stored)
    return last is not None and same_words(last.text, _input_messages(checked)[0].text)


SENTENCE_END = ".!?…。"
"""What a message may end with or not and still be the same message (S5)."""


def message_form(text: str) -> str:
    """``text`` as a person tells two messages apart: by its words, not how they were typed.

    Letter case, runs of spaces and the closing punctuation do not make another message
    ("Please file a claim." and "please file a claim" are one request sent twice, S5).
    """
    return " ".join(text.split()).casefold().rstrip(SENTENCE_END + " ")


def same_words(one: str, other: str) -> bool:
    """Whether two messages' texts are the same message typed again (S5, Q6)."""
    return message_form(one) == message_form(other)


SENT_AGAIN_LOG = (
    "a message repeats the last one of thread %r, whose run acted (keys %s): answered "
    "with that run's answer, no new run (S5, Q6)"
)


def text_digest(text: str) -> str:
    """A digest of a message's :func:`message_form`: what the state keeps of it (X4)."""
    return hashlib.sha256(message_form(text).encode("utf-8")).hexdigest()[:32]


def _stripped_digest(text: str) -> str:
    """The digest states stored before :func:`message_form` (a thread acted on before)."""
    return hashlib.sha256(text.strip().encode("utf-8")).hexdigest()[:32]


def acted_on(state: Mapping[str, Any], entries: Sequence[LedgerEntry]) -> dict[str, Any]:
    """``{"acted_on": digest}`` of the latest human message if an entry has a key, else ``{}``."""
    last = _last_human(state.get("messages") or ())
    if last is None or not any(entry.key for entry in entries):
        return {}
    return {"acted_on": text_digest(last.text)}


def may_repeat(checked: Any, values: Mapping[str, Any]) -> bool:
    """Whether one message has the text a tool that acts last acted on (a cheap test, S5)."""
    messages = _input_messages(checked)
    stored = values.get("acted_on")
    if not stored or len(messages) != 1:
        return False
    return stored in (text_digest(messages[0].text), _stripped_digest(messages[0].text))


def acting_entries(values: Mapping[str, Any]) -> list[LedgerEntry]:
    """The ledger entries of the thread's last run about a call of a tool that acted (Q6)."""
    ledger = values.get("ledger") or ()
    return [entry for entry in ledger if isinstance(entry, LedgerEntry) and entry.key]


def unfinishable_after_effect(state: Mapping[str, Any]) -> bool:
    """Whether a tool acted in this run and no checkpointer keeps it: a retry acts again (S5)."""
    if not acting_entries(state):
        return False
    return checkpointer_of(get_config().get("configurable") or {}) is None


NOT_FINISHABLE = (
    "toolweave: {calls} acted before this error, and the graph has no checkpointer: the run "
    "cannot be finished, and running the same input again acts again (S5, Q6). Do not retry "
    "it blindly: build the graph with a checkpointer and run it with a thread_id (the same "
    "message sent again then finishes the run), or make the tool dedupe on ctx.idempotency_key."
)
"""The note on an error of a run that acted and that no checkpointer keeps (S5, Q6)."""


def note_acted(entries: Sequence[LedgerEntry]) -> None:
    """Record in the run's scope the calls among ``entries`` that acted (their keys, S5)."""
    scope = current_scope()
    if scope is not None:
        scope.acted.extend(f"{entry.tool} (key {entry.key})" for entry in entries if entry.key)


def say_what_acted(error: BaseException, acted: Sequence[str]) -> None:
    """Note on ``error`` (and log) the calls that acted in a run no checkpointer keeps (S5, Q6)."""
    if not acted:
        return
    note = NOT_FINISHABLE.format(calls=", ".join(dict.fromkeys(acted)))
    error.add_note(note)
    logger.error(note)


def answered(values: Mapping[str, Any]) -> bool:
    """Whether the thread's last run ended with its answer (not abandoned mid-way, Q5)."""
    ledger = values.get("ledger") or ()
    abandoned = any(getattr(e, "kind", None) is LedgerKind.RUN_ABANDONED for e in ledger)
    return bool(values.get("answer")) and not abandoned


def sent_again(
    checked: Any, values: Mapping[str, Any], thread: str = "", texts: Texts | None = None
) -> SentAgainEvent | None:
    """The event of a repeat of a finished thread's last message, its run acted (S5, Q6)."""
    if not answered(values) or not repeats_the_last_question(checked, stored_messages(values)):
        return None
    acted = acting_entries(values)
    if not acted:
        return None
    logger.info(SENT_AGAIN_LOG, thread, ", ".join(dict.fromkeys(entry.key for entry in acted)))
    lang = str(getattr(values.get("message"), "user_lang", "") or "en")  # the run's, for the phrase
    return {
        "type": "sent_again",
        "version": EVENT_VERSION,
        "tools": list(
            dict.fromkeys(entry.tool or "" for entry in acted)
        ),  # in the order they acted
        "phrase": text_for("sent_again", lang, texts),
    }


def custom_chunk(data: Any, stream_mode: Any, *, subgraphs: bool, version: str) -> Any | None:
    """``data`` as LangGraph's stream yields a custom event (any shape), or ``None`` if not."""
    return mode_chunk("custom", data, stream_mode, subgraphs=subgraphs, version=version)


def mode_chunk(
    mode: str, data: Any, stream_mode: Any, *, subgraphs: bool, version: str
) -> Any | None:
    """``data`` as LangGraph's stream yields a chunk of ``mode``, or ``None`` if not streamed."""
    modes = [stream_mode] if isinstance(stream_mode, str) else list(stream_mode or ())
    if mode not in modes:
        return None
    if version == "v2":
        return {"type": mode, "ns": (), "data": data}
    if not isinstance(stream_mode, str):
        return ((), mode, data) if subgraphs else (mode, data)
    return ((), data) if subgraphs else data


def last_human_index(messages: Sequence[Any]) -> int:
    """The index of the last human message of ``messages`` (``-1``: none)."""
    return max((i for i, m in enumerate(messages) if isinstance(m, HumanMessage)), default=-1)


def answered_already(messages: Sequence[Any], domain: str | None = None) -> dict[str, Any] | None:
    """The output of a nested run whose question the conversation answers already (S5, Q6).

    A parent graph hands a toolweave node its whole conversation; when toolweave's answer
    follows the last human message (the message was sent again and the parent's
    ``add_messages`` put it back in place, or the same state was run again), that turn is
    answered: its answer and sources, from the answer's message, instead of a new run. An
    answer of another domain's graph (``domain``: this graph's, if known) answers nothing here.
    """
    last = last_human_index(messages)
    answers = [
        m
        for m in messages[last + 1 :]
        if isinstance(m, AIMessage)
        and MESSAGE_SOURCES_KEY in m.response_metadata
        and m.response_metadata.get(MESSAGE_DOMAIN_KEY, domain) in (domain, None)
    ]
    if last < 0 or not answers:
        return None
    sources = as_sources(answers[-1].response_metadata[MESSAGE_SOURCES_KEY])
    return {"messages": list(messages), "answer": answers[-1].text, "sources": sources}


def one_human_message(checked: Any) -> bool:
    """Whether a message input is one human message (a reply, or the question re-sent)."""
    messages = _input_messages(checked)
    return len(messages) == 1 and isinstance(messages[0], HumanMessage)


def repeated_while_paused(checked: Any, values: Mapping[str, Any]) -> bool:
    """Whether a message repeats the paused run's question instead of answering its pause (S5)."""
    pause = pause_of(values)
    if pause is None or awaiting(pause) == "nobody":
        return False
    if not repeats_the_last_question(checked, stored_messages(values)):
        return False
    if not isinstance(pause, Clarification):
        return True  # the client's tool results answer it, never a message
    text = _input_messages(checked)[0].text
    return next_message_kind(text, pause.question, pause.choices) in NEW_TURN


def recorded_effects(stored: Iterable[Mapping[str, Any]]) -> dict[str, ActedCall]:
    """The calls of tools that acted that checkpoints' states record, by key (S5, Q6)."""
    found: dict[str, ActedCall] = {}
    for values in stored:
        for made in acted_calls(values):
            if made.result or made.key not in found:
                found[made.key] = made
        for entry in acting_entries(values):
            found.setdefault(entry.key, _call_of(entry))
    return found


def _call_of(entry: LedgerEntry, result: str = "") -> ActedCall:
    """The call a ledger entry with a key records."""
    tool, task_no = entry.tool or "", entry.task_no or ""
    return ActedCall(tool=tool, task_no=task_no, key=entry.key, amends=entry.amends, result=result)


def recorded_call(key: str) -> ActedCall | None:
    """The call made under ``key`` that the thread's checkpoints record, in a replayed run (S5)."""
    scope = current_scope()
    return None if scope is None else scope.recorded.get(key)


def replay_reply_id(messages: Sequence[BaseMessage], clarification_round: int, reply: str) -> str:
    """The id of a reply given by ``Command(resume=...)``: the same when that resume is replayed."""
    parts = [latest_human_message_id(messages), clarification_round, reply.strip()]
    digest = hashlib.sha256(json.dumps(parts, ensure_ascii=False).encode("utf-8")).hexdigest()
    return f"reply-{digest[:24]}"


def acted_calls(state: Mapping[str, Any]) -> tuple[ActedCall, ...]:
    """The calls of tools that act whose effect stands: carried, not replaced, then this run's."""
    message = state.get("message")
    carried: tuple[ActedCall, ...] = tuple(message.amends) if message is not None else ()
    carried_keys = {call.key for call in carried}  # a kept call's entry names its carried key
    ledger: Sequence[LedgerEntry] = state.get("ledger") or ()
    made = [
        e
        for e in ledger
        if e.kind is LedgerKind.TOOL_RESULT and e.key and e.key not in carried_keys
    ]
    replaced = {key for entry in made for key in entry.amends}
    standing = [call for call in carried if call.key not in replaced]
    buffer: Mapping[str, Sequence[Any]] = state.get("context_buffer") or {}
    for entry in made:
        results = buffer.get(completion_key(entry.task_no or "", entry.tool or ""))
        standing.append(
            _call_of(entry, str(getattr(results[-1], "context", "")) if results else "")
        )
    return tuple(standing)


def earlier_call(state: Mapping[str, Any], task_no: str, tool: str) -> ActedCall | None:
    """The call of ``tool`` (on ``task_no`` first) that this call replaces in an amended request."""
    message = state.get("message")
    if message is None or not message.amends:
        return None
    ledger: Sequence[LedgerEntry] = state.get("ledger") or ()
    taken = {key for e in ledger if e.key and e.task_no for key in (*e.amends, e.key)}
    mine = [c for c in message.amends if c.tool == tool and c.key not in taken]
    same_task = (call for call in mine if call.task_no == task_no)
    return next(same_task, mine[0] if mine else None)
