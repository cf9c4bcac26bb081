"""Checks on the model's normalization of a message (A1, T10), before the root task is made."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from langchain_core.messages import AnyMessage

from toolweave.llm.lexical import content_words, matches, words
from toolweave.llm.offline import normalize_offline
from toolweave.llm.port import Normalized
from toolweave.tools.language import detect_language


def rewrite_fault(message: str, history: Sequence[AnyMessage], rewrite: str) -> str | None:
    """What ``rewrite`` does wrong (A1): drops a content word of ``message``, or adds one unsaid."""
    written = words(rewrite)
    if not all(any(matches(w, r) for r in written) for w in content_words(message)):
        return "drops the message's own words"
    said = words(" ".join([message, *(m.text for m in history)]))
    if not all(any(matches(w, s) or matches(s, w) for s in said) for w in content_words(rewrite)):
        return "adds words nobody wrote"
    return None


def check_normalized(
    message: str, history: Sequence[AnyMessage], norm: Normalized
) -> tuple[Normalized, list[str]]:
    """The normalization with A1 and T10 applied, and a note per change for the ledger."""
    notes: list[str] = []
    if not history and norm.question != message:
        notes.append(f"first turn kept as written, not {norm.question!r} (A1)")
        norm = replace(norm, question=message)
    elif history and (fault := rewrite_fault(message, history, norm.question)) is not None:
        offline = normalize_offline(message, history, default_lang=norm.user_lang).question
        notes.append(f"rewrite {norm.question!r} {fault}: {offline!r} (A1)")
        norm = replace(norm, question=offline)
    guess = detect_language(message)
    if guess.lang is not None and guess.lang != norm.user_lang:
        notes.append(f"language {guess.lang} by the detector, not the model's {norm.user_lang}")
        norm = replace(norm, user_lang=guess.lang)
    return norm, notes
