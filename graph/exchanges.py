"""Clarification questions and their replies as the thread's messages hold them (Q2, Q8)."""

from __future__ import annotations

from collections.abc import Sequence

from langchain_core.messages import AIMessage, AnyMessage, HumanMessage

from toolweave.llm.next_message import choice_number, correction
from toolweave.llm.offline_followup import CLARIFICATION_KEY
from toolweave.llm.port import ClarificationExchange
from toolweave.state.pauses import Clarification
from toolweave.state.task import completion_key

PAUSE_KEY = CLARIFICATION_KEY
"""Where a clarification question's AI message keeps who asked and the choices (Q8)."""


def resolve_choice(reply: str, choices: Sequence[str]) -> str:
    """A reply that picks an offered choice by its place (after a correction's marker too) is it."""
    number = choice_number(reply, choices)
    if number is None:  # "Sorry, I meant the second one"
        number = choice_number(correction(reply) or "", choices)
    return reply if number is None else choices[number - 1]


def clarification_message(question: Clarification) -> AIMessage:
    """The message of a clarification question, with who asked and the choices (Q2, Q8)."""
    asker = completion_key(question.task_no, question.tool)
    extra = {PAUSE_KEY: {"asker": asker, "choices": list(question.choices)}}
    return AIMessage(content=question.question, additional_kwargs=extra)


def exchange_of(asked: AIMessage, reply: str) -> ClarificationExchange:
    """The exchange of a clarification message and its reply, a choice's number resolved."""
    tagged = asked.additional_kwargs.get(PAUSE_KEY)
    facts = tagged if isinstance(tagged, dict) else {}
    choices = [str(c) for c in facts.get("choices") or ()]
    return ClarificationExchange(
        question=asked.text,
        reply=resolve_choice(reply, choices),
        asker=str(facts.get("asker") or ""),
    )


def exchanges_of(
    messages: Sequence[AnyMessage], rounds: int
) -> tuple[int, list[ClarificationExchange]]:
    """Where this request's question is in ``messages``, and its ``rounds`` exchanges (Q8).

    Read back from the end: a clarification question (an AI message) then its reply (a
    human message), at most ``rounds`` pairs, oldest first.
    """
    end = len(messages) - 1  # the question, or the last reply
    exchanges: list[ClarificationExchange] = []
    while rounds > len(exchanges) and end >= 2:
        asked, reply = messages[end - 1], messages[end]
        if not (isinstance(asked, AIMessage) and isinstance(reply, HumanMessage)):
            break
        exchanges.insert(0, exchange_of(asked, reply.text))
        end -= 2
    return end, exchanges


def replies_to(
    messages: Sequence[AnyMessage], rounds: int, task_no: str, tool: str, reply: str
) -> tuple[str, ...]:
    """Q2: the replies of this request to ``tool``'s questions on ``task_no``, oldest first.

    ``reply`` (the one the tool continues with) is the last, also when the thread's
    messages do not hold it yet.
    """
    asker = completion_key(task_no, tool)
    _, exchanges = exchanges_of(messages, rounds)
    replies = [exchange.reply for exchange in exchanges if exchange.asker == asker]
    if not replies or replies[-1] != reply:
        replies.append(reply)
    return tuple(replies)
