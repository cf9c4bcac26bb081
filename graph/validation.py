"""Every input checked before LangGraph writes any of it (X1, X5): a node's check is too late."""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any, cast, get_type_hints

from langchain_core.messages import (
    AIMessage,
    AnyMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    convert_to_messages,
)
from langchain_core.prompt_values import PromptValue
from langgraph.types import Command

from toolweave.graph.context import Limits, RunContext
from toolweave.state.errors import InvalidContextError, InvalidRequestError, did_you_mean
from toolweave.state.graph_state import InputState

NO_QUESTION = "the request has no human message to answer"
EMPTY_QUESTION = "the message is empty"
LAST_NOT_HUMAN = "the last message must be the user's (a human message), not {kind}"
TOO_LONG = "the message is {length} characters long; the limit is {limit}"
NOT_A_MAPPING = (
    "the input must be a mapping such as {{'messages': [{{'role': 'user', 'content': '...'}}]}} "
    "(or a text, a message, a list of messages, a PromptValue), not {kind}"
)
UNKNOWN_KEYS = "unknown input key(s) {keys}; the input takes {known}"
NO_MESSAGES = "the input has no 'messages': send the user's message as the last one"
MESSAGES_NOT_LIST = "'messages' must be a list of messages, not {kind}"
TOO_MANY_MESSAGES = "the input has {count} messages; at most {limit} are accepted at once"
BAD_MESSAGE = (
    "message {index} is not a chat message ({why}); use a LangChain message, "
    "{{'role': 'user', 'content': '...'}}, ('user', '...') or a plain text"
)
HISTORY_TOO_LONG = "message {index} is {length} characters long; earlier messages may have {limit}"
BAD_TEXT = "{what} contains characters that are not valid Unicode (lone surrogates)"
BAD_SYSTEMS = "'systems' must be a list of system names (texts), not {kind}"
BAD_USER_DATA = "'user_data' must be a mapping with text keys, not {kind}"
BAD_VALUE = (
    "{what} holds {kind}; only texts, numbers, booleans, None, lists and mappings are stored"
)
BIG_INT = "{what} holds an integer beyond 64 bits"
BAD_FLOAT = "{what} holds a number that is not finite"
BAD_KEY = "{what} has a key that is not a text ({kind})"
TOO_DEEP = "{what} is nested deeper than {limit} levels"
TOO_BIG = "{what} is larger than {limit} characters"
BAD_REPLY = "a clarification reply must be text, or a mapping with a 'reply' text"
NO_RESUME = (
    "Command(resume=None) resumes nothing: pass the reply, e.g. Command(resume='...'); "
    "to finish an interrupted run use toolweave.resume_interrupted()"
)
COMMAND_ONLY_RESUME = (
    "only Command(resume=...) is accepted as run input; Command(update=..., goto=...) "
    "would write to the thread unchecked"
)
UNKNOWN_CONTEXT_KEYS = (
    "unknown run context key(s) {keys}{hint}: the run context takes {known} (toolweave.RunContext)"
    "; pass e.g. context={{'user_data': {{...}}}} or context=RunContext(user_data={{...}})"
)
BAD_CONTEXT = (
    "the run context must be a toolweave.RunContext or a mapping of its fields ({known}), "
    "not {kind}"
)
BAD_CONTEXT_USER_DATA = (
    "the run context's 'user_data' must be a mapping of the person's data "
    "(e.g. {{'user_id': '...'}}) or None, not {kind}"
)
CONTEXT_IN_CONFIG = (
    "the run context is in the config (config['context']), where LangGraph never reads it: pass "
    "it beside the config, graph.invoke(input, config, context=RunContext(...)) or context={...}"
)
MAX_INPUT_MESSAGES = 500
"""Messages accepted in one input (a client that re-sends the whole conversation)."""
HISTORY_CHARS_FACTOR = 8
"""Earlier messages of an input may be this many times :attr:`Limits.max_message_chars`."""
MAX_SYSTEMS = 64
MAX_DATA_DEPTH = 16
"""Nesting levels of ``user_data`` and resume values."""
MAX_DATA_CHARS = 262_144
"""Characters of texts and keys in ``user_data`` (and in a resume value), in total."""
INT_RANGE = (-(2**63), 2**64 - 1)
"""What msgpack stores: signed and unsigned 64-bit integers."""

_ROLES = {
    "human": HumanMessage,
    "user": HumanMessage,
    "ai": AIMessage,
    "assistant": AIMessage,
    "system": SystemMessage,
    "developer": SystemMessage,
}
"""Roles accepted in ``(role, content)`` pairs; tool messages need a ``tool_call_id``."""


@functools.cache
def input_keys() -> tuple[str, ...]:
    """The keys a run input may have: those of :class:`InputState`, resolved once."""
    return tuple(get_type_hints(InputState))


def check_text(text: str, what: str) -> str:
    """``text`` if it encodes as UTF-8 (the checkpoint stores UTF-8), else the error."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidRequestError(BAD_TEXT.format(what=what)) from None
    return text


class _Budget:
    """Characters left for one value's texts (X5: sizes are bounded)."""

    def __init__(self, what: str, limit: int) -> None:
        self.what = what
        self.limit = limit
        self.left = limit

    def spend(self, text: str) -> None:
        self.left -= len(text)
        if self.left < 0:
            raise InvalidRequestError(TOO_BIG.format(what=self.what, limit=self.limit))


def check_data(value: Any, what: str, *, limit: int = MAX_DATA_CHARS) -> Any:
    """``value`` as plain JSON-like data (lists and dicts), or :class:`InvalidRequestError`."""
    return _data(value, what, 0, _Budget(what, limit))


def _data(value: Any, what: str, depth: int, budget: _Budget) -> Any:
    if depth > MAX_DATA_DEPTH:
        raise InvalidRequestError(TOO_DEEP.format(what=what, limit=MAX_DATA_DEPTH))
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int | float):
        return _number(value, what)
    if isinstance(value, str):
        budget.spend(value)
        return str(check_text(value, what))
    if isinstance(value, Mapping):
        return _mapping(value, what, depth, budget)
    if isinstance(value, list | tuple):
        return [_data(item, what, depth + 1, budget) for item in value]
    raise InvalidRequestError(BAD_VALUE.format(what=what, kind=type(value).__name__))


def _number(value: int | float, what: str) -> int | float:
    """An integer within 64 bits or a finite float, as the plain type."""
    if isinstance(value, int):
        if not INT_RANGE[0] <= value <= INT_RANGE[1]:
            raise InvalidRequestError(BIG_INT.format(what=what))
        return int(value)
    if not math.isfinite(value):
        raise InvalidRequestError(BAD_FLOAT.format(what=what))
    return float(value)


def _mapping(value: Mapping[Any, Any], what: str, depth: int, budget: _Budget) -> dict[str, Any]:
    """A mapping with text keys, each value checked one level deeper."""
    checked: dict[str, Any] = {}
    for key, item in value.items():
        if not isinstance(key, str):
            raise InvalidRequestError(BAD_KEY.format(what=what, kind=type(key).__name__))
        budget.spend(key)
        checked[str(check_text(key, what))] = _data(item, what, depth + 1, budget)
    return checked


def question_of(messages: Sequence[AnyMessage], limits: Limits) -> str:
    """The question: the last message, which must be the user's, non-empty, within limits (X1)."""
    if not messages:
        raise InvalidRequestError(NO_QUESTION)
    last = messages[-1]
    if not isinstance(last, HumanMessage):
        raise InvalidRequestError(LAST_NOT_HUMAN.format(kind=type(last).__name__))
    question = check_text(last.text, "the message").strip()
    if not question:
        raise InvalidRequestError(EMPTY_QUESTION)
    if len(question) > (limit := limits.max_message_chars):
        raise InvalidRequestError(TOO_LONG.format(length=len(question), limit=limit))
    return question


def _message(item: Any, index: int) -> AnyMessage:
    """One message-like item as a LangChain message (the forms ``add_messages`` accepts)."""

    def bad(why: str) -> InvalidRequestError:
        return InvalidRequestError(BAD_MESSAGE.format(index=index, why=why))

    if isinstance(item, BaseMessage):
        return item  # type: ignore[return-value]
    if isinstance(item, str):
        return HumanMessage(content=check_text(item, f"message {index}"))
    if isinstance(item, list | tuple):
        return _pair(item, bad)
    if isinstance(item, Mapping):
        return _mapped_message(item, index, bad)
    raise bad(f"a {type(item).__name__}")


def _pair(item: Sequence[Any], bad: Callable[[str], InvalidRequestError]) -> AnyMessage:
    """A ``(role, content)`` pair as a message."""
    if len(item) != 2 or not isinstance(item[0], str):
        raise bad("a pair must be (role, content)")
    role, content = item
    kind = _ROLES.get(role.lower())
    if kind is None:
        raise bad(f"unknown role {role!r}")
    if not isinstance(content, str | list):
        raise bad("the content must be text")
    return cast("AnyMessage", kind(content=content))


def _mapped_message(
    item: Mapping[str, Any], index: int, bad: Callable[[str], InvalidRequestError]
) -> AnyMessage:
    """A ``{"role": ..., "content": ...}`` mapping as a message."""
    role = item.get("role", item.get("type"))
    if not isinstance(role, str) or "content" not in item:
        raise bad("a mapping needs 'role' and 'content'")
    if role.lower() not in _ROLES and role not in ("tool", "function"):
        raise bad(f"unknown role {role!r}")
    data = check_data(dict(item), f"message {index}")
    try:
        return cast("AnyMessage", convert_to_messages([data])[0])
    except (ValueError, TypeError, KeyError, NotImplementedError) as exc:
        raise bad(str(exc)) from None


def _checked_message(message: AnyMessage, index: int, limit: int) -> None:
    """The stored parts of a message are valid Unicode, JSON-like and bounded."""
    what = f"message {index}"
    content = message.content
    if isinstance(content, str):
        check_text(content, what)
        if len(content) > limit:
            raise InvalidRequestError(
                HISTORY_TOO_LONG.format(index=index, length=len(content), limit=limit)
            )
    else:
        check_data(content, what, limit=limit)
    check_data(message.additional_kwargs, what)
    check_data(message.response_metadata, what)
    for text in (message.id, message.name):
        if text is not None:
            check_text(text, what)


def parse_messages(value: Any, limits: Limits) -> list[AnyMessage]:
    """The input's ``messages`` as LangChain messages, the last one the question (X1, X5)."""
    if isinstance(value, str | bytes) or not isinstance(value, Sequence):
        raise InvalidRequestError(MESSAGES_NOT_LIST.format(kind=type(value).__name__))
    if len(value) > MAX_INPUT_MESSAGES:
        raise InvalidRequestError(
            TOO_MANY_MESSAGES.format(count=len(value), limit=MAX_INPUT_MESSAGES)
        )
    messages = [_message(item, index) for index, item in enumerate(value)]
    history_limit = limits.max_message_chars * HISTORY_CHARS_FACTOR
    for index, message in enumerate(messages):
        _checked_message(message, index, history_limit)
    question_of(messages, limits)
    return messages


def parse_systems(value: Any) -> list[str]:
    """The request's system filter (T3) as a list of texts."""
    if value is None:
        return []
    listed = isinstance(value, Sequence) and not isinstance(value, str | bytes)
    if not listed or len(value) > MAX_SYSTEMS or not all(isinstance(i, str) for i in value):
        raise InvalidRequestError(BAD_SYSTEMS.format(kind=type(value).__name__))
    return [check_text(item, "'systems'") for item in value]


def parse_user_data(value: Any) -> dict[str, Any] | None:
    """``user_data`` (T4) as plain JSON-like data, so that the checkpoint can store it."""
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise InvalidRequestError(BAD_USER_DATA.format(kind=type(value).__name__))
    return cast("dict[str, Any]", check_data(value, "'user_data'"))


def parse_message_input(value: Any, limits: Limits) -> dict[str, Any]:
    """A new-message input checked and normalized: what LangGraph will store."""
    if not isinstance(value, Mapping):
        raise InvalidRequestError(NOT_A_MAPPING.format(kind=type(value).__name__))
    known = input_keys()
    unknown = sorted(str(key) for key in value if key not in known)
    if unknown:
        raise InvalidRequestError(
            UNKNOWN_KEYS.format(keys=", ".join(map(repr, unknown)), known=", ".join(known))
        )
    if "messages" not in value:
        raise InvalidRequestError(NO_MESSAGES)
    parsers: dict[str, Callable[[Any], Any]] = {
        "messages": lambda item: parse_messages(item, limits),
        "systems": parse_systems,
        "user_data": parse_user_data,
    }
    return {  # a key added to InputState later: at least storable
        key: parsers[key](item) if key in parsers else check_data(item, repr(key))
        for key, item in value.items()
    }


def check_context(context: Any) -> None:
    """A run's ``context=`` is one LangGraph can make a :class:`RunContext` of (T4, N3, X5).

    Raises:
        InvalidContextError: Before anything is stored.
    """
    if context is None:
        return
    known = tuple(field.name for field in dataclasses.fields(RunContext))  # nothing else
    if isinstance(context, RunContext):
        user_data = context.user_data
    elif isinstance(context, Mapping):
        unknown = [key for key in context if key not in known]
        if unknown:
            keys, hint = ", ".join(map(repr, unknown)), did_you_mean(unknown, known)
            error = UNKNOWN_CONTEXT_KEYS.format(keys=keys, hint=hint, known=", ".join(known))
            raise InvalidContextError(error)
        user_data = context.get("user_data")
    else:
        raise InvalidContextError(
            BAD_CONTEXT.format(known=", ".join(known), kind=type(context).__name__)
        )
    if user_data is not None and not isinstance(user_data, Mapping):
        raise InvalidContextError(BAD_CONTEXT_USER_DATA.format(kind=type(user_data).__name__))


def check_config(*configs: Mapping[str, Any] | None) -> None:
    """No run context in a config: LangGraph reads it only from ``context=`` (N3, X5).

    Raises:
        InvalidContextError: Before anything is stored.
    """
    if any("context" in (config or {}) for config in configs):
        raise InvalidContextError(CONTEXT_IN_CONFIG)


def reply_text(value: Any) -> str:
    """The reply text of a ``Command(resume=...)`` value: a string or ``{"reply": ...}``."""
    if isinstance(value, Mapping):
        value = value.get("reply", value.get("content"))
    if not isinstance(value, str) or not value.strip():
        raise InvalidRequestError(BAD_REPLY)
    return value.strip()


def check_reply(value: Any, limits: Limits) -> str:
    """A clarification reply (Q2): text, valid Unicode, within the message limit."""
    text = check_text(reply_text(value), "the reply")
    if len(text) > limits.max_message_chars:
        raise InvalidRequestError(TOO_LONG.format(length=len(text), limit=limits.max_message_chars))
    return text


def check_command(command: Command[Any], limits: Limits) -> Command[Any]:
    """A ``Command`` sent as run input: a resume value only, storable (X5)."""
    if command.update is not None or command.goto or command.graph is not None:
        raise InvalidRequestError(COMMAND_ONLY_RESUME)
    if command.resume is None:
        raise InvalidRequestError(NO_RESUME)
    check_data(command.resume, "the resume value")
    if isinstance(command.resume, str):
        check_reply(command.resume, limits)
    return command


def as_message_input(value: Any) -> Any:
    """What an LCEL chain hands the graph, as a message input (a mapping is left as it is)."""
    if isinstance(value, PromptValue):
        return {"messages": value.to_messages()}
    if isinstance(value, BaseMessage | str):
        return {"messages": [value]}
    if isinstance(value, list):
        return {"messages": value}
    return value


def validate_input(value: Any, limits: Limits | None = None) -> Any:
    """Check a run input before anything is written; return it as it will be stored.

    Args:
        value: What would be passed to ``graph.invoke``: ``{"messages": [...],
            "systems": [...], "user_data": {...}}`` (or what :func:`as_message_input`
            turns into one), ``Command(resume=...)``, or ``None`` (continue an
            interrupted run, see :func:`resume_interrupted`).
        limits: The graph's limits (the message size, X1); the defaults if omitted.

    Returns:
        ``None``, the ``Command``, or the input with ``messages`` converted to
        LangChain messages and ``user_data`` to plain data.

    Raises:
        InvalidRequestError: With a message fit for the user. Whether a resume value fits the
            thread's pending question is checked by the graph, which reads the thread.
    """
    limits = limits or Limits()
    if value is None:
        return None
    value = as_message_input(value)
    if isinstance(value, Command):
        return check_command(value, limits)
    return parse_message_input(value, limits)
