"""The constrained answer streamed sentence by sentence while the model writes (R9, P2)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.runnables import Runnable
from pydantic import BaseModel, ValidationError

from toolweave.llm import deadline
from toolweave.llm.citations import (
    Checked,
    Claim,
    claims_of,
    joined,
    marked_text,
    reply_claims,
    says_something,
    supports,
    verify,
)
from toolweave.llm.errors import LlmBrokenReplyError
from toolweave.llm.passthrough import astream_message, split_for_streaming, stream_message
from toolweave.llm.port import AnswerRequest
from toolweave.llm.retries import call_config, finish_reason, stopped
from toolweave.state.run_scope import aclosed_at_end, closed_at_end
from toolweave.tools.effects import Call

SHOWN = "toolweave_shown"
"""``response_metadata`` key of a constrained answer: the text its stream already showed."""
CHECKED = "toolweave_checked"
"""``response_metadata`` key of the sentences a stream checked: the node checks each once."""
_ITEM_DEPTH = 3
"""Nesting of a sentence object: the reply's object, its ``sentences`` list, the item."""


class ItemReader:
    """Reads the sentence objects of a streamed constrained reply as each one completes."""

    def __init__(self) -> None:
        """Start before the reply's first character."""
        self._text = ""
        self._at = 0
        self._depth = 0
        self._start = -1
        self._in_string = False
        self._escaped = False

    def feed(self, piece: str) -> list[dict[str, Any]]:
        """The sentence objects completed by ``piece`` (those that parse as objects)."""
        self._text += piece
        done: list[dict[str, Any]] = []
        while self._at < len(self._text):
            closed = self._step(self._text[self._at])
            self._at += 1
            if closed:
                item = _parsed(self._text[self._start : self._at])
                if item is not None:
                    done.append(item)
        return done

    def _step(self, char: str) -> bool:
        """Follow ``char``; whether it closed a sentence object."""
        if self._in_string:
            self._escaped = not self._escaped and char == "\\"
            self._in_string = self._escaped or char != '"'
            return False
        if char == '"':
            self._in_string = True
        elif char in "{[":
            self._depth += 1
            if self._depth == _ITEM_DEPTH and char == "{":
                self._start = self._at
        elif char in "}]":
            self._depth -= 1
            return self._depth == _ITEM_DEPTH - 1 and char == "}" and self._start >= 0
        return False


def _parsed(text: str) -> dict[str, Any] | None:
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


@dataclass
class SentenceGate:
    """Checks each completed sentence object and says what to show of it now (R9, P2)."""

    request: AnswerRequest
    schema: type[BaseModel]
    clean: Callable[[str], str]
    foreign: Sequence[str]
    strays: Callable[[Claim], bool] = lambda _: False
    """Whether a sentence may give another subject's figure: the answer node decides it, with
    the whole answer (:func:`~toolweave.llm.answer_rules.without_strays`), so nothing more is
    shown before it has."""
    items: list[dict[str, Any]] = field(default_factory=list)
    reply: BaseModel | None = None
    """The completed items so far, validated (``None`` before the first or after a bad one)."""
    shown: str = ""
    checked: list[Checked] = field(default_factory=list)
    """The sentences checked so far, in order: the answer node reuses them (:data:`CHECKED`)."""
    _judged: int = 0
    _pending: list[Claim] = field(default_factory=list)
    _last_line: int | None = None
    _open: bool = True

    def add(self, item: dict[str, Any]) -> str:
        """Take one completed sentence object; the text to show now (maybe ``""``)."""
        self.items.append(item)
        try:
            self.reply = self.schema.model_validate({"sentences": self.items})
        except ValidationError:
            self._open, self.reply = False, None
            return ""
        documents = self.request.documents
        first = self.request.first_cited
        text = self.clean(marked_text(reply_claims(self.reply, documents, first=first)))
        claims = claims_of(text, len(documents))
        new, self._judged = claims[self._judged :], len(claims)
        return "".join(self._judge(claim) for claim in new) if self._open else ""

    def _judge(self, claim: Claim) -> str:
        """One claim checked: the text to show now (with what waited for it)."""
        if not self._open:
            return ""
        states = says_something(claim.text)
        own = self.request.guaranteed_texts  # R5: a guaranteed text needs no citation
        if states and not claim.cited and not supports(claim.text, own):
            # its check needs the whole answer's passages
            self._open = False
            return ""
        request = self.request
        docs, guaranteed = request.documents, request.guaranteed
        (checked,) = verify([claim], docs, guaranteed, (), uncovered=self.foreign)
        self.checked.append(checked)
        if not checked.supported:
            return ""
        if states and self.strays(claim):
            self._open = False
            return ""
        self._pending.append(claim)
        return self._release() if states else ""

    def _release(self) -> str:
        """The waiting claims' text, each after its separator (as the answer joins them)."""
        line = self._pending[0].line
        out = "" if self._last_line is None else ("\n" if line != self._last_line else " ")
        out += joined(self._pending)
        self._last_line = self._pending[-1].line
        self._pending.clear()
        self.shown += out
        return out


def gate_for(request: AnswerRequest, schema: type[BaseModel]) -> SentenceGate:
    """The gate of one constrained answer, with the answer node's rules (R9)."""
    from toolweave.llm import answer_rules  # it imports the chat model, which imports this

    subject = answer_rules.asked_subject(request.question)

    def strays(claim: Claim) -> bool:  # the node decides these with the whole answer
        return answer_rules.strays(
            claim.text, claim.cited, request, subject
        ) or answer_rules.borrows_figure(claim.text, claim.cited, request, subject)

    return SentenceGate(
        request,
        schema,
        answer_rules.without_placeholders,
        answer_rules.uncovered_words(request),
        strays,
    )


@dataclass
class Streamed:
    """One streamed constrained call: the raw reply, the gate, and the shown message."""

    raw: Any
    gate: SentenceGate
    shown: AIMessage


class _Run:
    """One attempt: the model's JSON chunks read, the kept sentences' words yielded."""

    def __init__(self, gate: SentenceGate, stop: Callable[[str], bool] | None) -> None:
        self.gate = gate
        self.reader = ItemReader()
        self.raw: Any = None
        self.stop = stop

    def take(self, chunk: Any) -> tuple[list[str], bool]:
        """The words to show after ``chunk``, and whether the stream ends here (X3, X5)."""
        self.raw = chunk if self.raw is None else self.raw + chunk
        words: list[str] = []
        for item in self.reader.feed(str(getattr(chunk, "text", "") or "")):
            words += split_for_streaming(self.gate.add(item))
        if self.stop is not None and self.stop(str(getattr(self.raw, "text", ""))):
            self.raw = stopped(self.raw)
            return words, True
        deadline.check("the end of the cited answer's stream")
        return words, False

    def words(self, chunks: Iterator[Any]) -> Iterator[str]:
        with closed_at_end(chunks):
            for chunk in chunks:
                words, done = self.take(chunk)
                yield from words
                if done:
                    break
        yield from self.nothing_shown()

    async def awords(self, chunks: AsyncIterator[Any]) -> AsyncIterator[str]:
        async with aclosed_at_end(chunks):
            async for chunk in chunks:
                words, done = self.take(chunk)
                for word in words:
                    yield word
                if done:
                    break
        for word in self.nothing_shown():
            yield word

    def nothing_shown(self) -> list[str]:
        """``[""]`` when no word was shown: an empty stream would raise and be asked again."""
        return [] if self.gate.shown else [""]

    def result(self, shown: AIMessage) -> Streamed:
        if self.raw is None or finish_reason(self.raw) is None:
            raise LlmBrokenReplyError(
                "cited_answer: the reply ended without a finish reason (stream cut off mid-way)"
            )
        return Streamed(self.raw, self.gate, shown)


def cited_stream(
    llm: Runnable[Any, Any],
    messages: Sequence[BaseMessage],
    gate: Callable[[], SentenceGate],
    *,
    timeout: float | None = None,
    stop: Callable[[str], bool] | None = None,
) -> Call[Streamed]:
    """The call streaming ``llm``'s constrained reply, its kept sentences shown as they come."""
    config = call_config("cited_answer")

    def sync() -> Streamed:
        run = _Run(gate(), stop)
        shown = stream_message(run.words(iter(llm.stream(list(messages), config=config))))
        return run.result(shown)

    async def read() -> Streamed:
        run = _Run(gate(), stop)
        shown = await astream_message(run.awords(llm.astream(list(messages), config=config)))
        return run.result(shown)

    async def asynchronous() -> Streamed:
        return await asyncio.wait_for(read(), timeout=deadline.bound(timeout))

    return Call(sync, asynchronous)
