"""The next message on a thread that waits on a clarification: a reply, a new question, or a cancel.

A person asked "Which branch?" may answer it ("Central"), ask something else ("How
much is the annual membership?") or drop it ("never mind"). Feeding the new question
to the tool as its reply answers nothing; so the graph reads the message first
(:func:`next_message_kind`), by rules that hold in any domain: the words that cancel
are a language's, not a domain's, and a new question is told apart by its form (a
question mark or a question word, several words) and by naming nothing of what was
asked (no word of the question, no offered choice).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from toolweave.llm.lexical import QUESTION_WORDS, content_words
from toolweave.tools.text import GREETINGS_EN, GREETINGS_HU, GREETINGS_PL, fold, words

NextMessageKind = Literal["reply", "new_question", "cancel"]
"""What the message does to the open question (Q2, Q8)."""

CANCEL_PHRASES = frozenset(
    fold(phrase)
    for phrase in (
        "never mind", "nevermind", "forget it", "cancel", "skip it", "skip", "no thanks",
        "stop", "mindegy", "hagyjuk", "felejtsd el", "mégsem", "nem kell", "nieważne",
        "nie ważne", "anuluj", "zapomnij", "nie trzeba", "pomiń",
    )
)  # fmt: skip
"""Whole messages that drop the question, in each language the text kit knows."""

POLITE = frozenset(
    fold(w)
    for w in (*GREETINGS_EN, *GREETINGS_HU, *GREETINGS_PL, "please", "you", "ok", "okay",
              "kérem", "proszę")
)  # fmt: skip
"""Words a cancel may carry besides its phrase ("never mind, thanks", "nieważne, dzięki")."""

QUESTION_OPENERS = frozenset(fold(w) for w in QUESTION_WORDS)
"""The question words, folded: a message opening with one asks something."""

MIN_QUESTION_WORDS = 4
"""A new question has at least this many words; a short reply ("the Central one?") is a reply."""


def is_cancel(message: str) -> bool:
    """The message is a cancel phrase alone (polite words aside)."""
    said = [w for w in (fold(w) for w in words(message)) if w not in POLITE]
    return " ".join(said) in CANCEL_PHRASES


def names_what_was_asked(message: str, question: str, choices: Sequence[str]) -> bool:
    """The message holds a word of the open question or of an offered choice, or its number."""
    stripped = message.strip().rstrip(".)")
    if stripped.isdigit() and 1 <= int(stripped) <= len(choices):
        return True
    said = {fold(w) for w in content_words(message)}
    asked = {fold(w) for text in (question, *choices) for w in content_words(text)}
    return bool(said & asked)


def asks_a_question(message: str) -> bool:
    """The message is a question of its own: a question mark or a question word, several words."""
    found = words(message)
    if len(found) < MIN_QUESTION_WORDS:
        return False
    return message.rstrip().endswith("?") or fold(found[0]) in QUESTION_OPENERS


def next_message_kind(message: str, question: str, choices: Sequence[str]) -> NextMessageKind:
    """What ``message`` does to the open ``question`` (with its offered ``choices``).

    Examples:
        >>> next_message_kind("Central", "Which branch?", ["Central", "Riverside"])
        'reply'
        >>> next_message_kind("How much is the annual membership?", "Which branch?", [])
        'new_question'
        >>> next_message_kind("Never mind, thanks.", "Which branch?", [])
        'cancel'
    """
    if is_cancel(message):
        return "cancel"
    if names_what_was_asked(message, question, choices):
        return "reply"
    return "new_question" if asks_a_question(message) else "reply"
