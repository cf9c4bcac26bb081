"""The coordinator marker between a subtask's prompt context and its own prompt (M3-M5)."""

from __future__ import annotations

AGENT_COORDINATOR_MARKER = "\n\n<<<toolweave:coordinator-task>>>\n\n"
"""Separates the parent's execution text from the subtask's prompt (M3)."""


def is_coordinator_requested(text: str) -> bool:
    """Whether ``text`` is the execution text of a coordinator-made subtask (M4)."""
    return AGENT_COORDINATOR_MARKER in text


def extract_coordinator_task(text: str) -> str:
    """The subtask's own prompt: everything after the last marker (M5), else ``text``."""
    _, marker, task = text.rpartition(AGENT_COORDINATOR_MARKER)
    return task if marker else text


def extract_coordinator_original(text: str) -> str:
    """The parent's execution text: everything before the last marker (M5), else ``text``."""
    original, marker, _ = text.rpartition(AGENT_COORDINATOR_MARKER)
    return original if marker else text
