"""Checks on the model's normalization of a message (A1, T10), before the root task is made.

- **A1, first turn.** A question with no earlier turns is kept as the user wrote
  it: rewriting is for follow-ups, which need the history to stand alone. A
  small model's rewrite of a first question is noise at best and, at worst, a
  different question (or a doctor's name the coordinator no longer matches).
- **T10, language.** The model's language tag is cross-checked by the
  deterministic detector (``toolweave.tools.language``) on the user's own
  message; when the detector is confident and disagrees, the detector wins.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from langchain_core.messages import AnyMessage

from toolweave.llm.port import Normalized
from toolweave.tools.language import detect_language


def check_normalized(
    message: str, history: Sequence[AnyMessage], norm: Normalized
) -> tuple[Normalized, list[str]]:
    """The normalization with A1 and T10 applied, and a note per change for the ledger."""
    notes: list[str] = []
    if not history and norm.question != message:
        notes.append(f"first turn kept as written, not {norm.question!r} (A1)")
        norm = replace(norm, question=message)
    guess = detect_language(message)
    if guess.lang is not None and guess.lang != norm.user_lang:
        notes.append(f"language {guess.lang} by the detector, not the model's {norm.user_lang}")
        norm = replace(norm, user_lang=guess.lang)
    return norm, notes
