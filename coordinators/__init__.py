"""Coordinators: task decomposition, conditional subtasks and (later) deep search."""

from toolweave.coordinators.base import (
    AgentCoordinator,
    CompletedSoFar,
    DecomposingCoordinator,
    SubtaskDecision,
    is_coordinator,
)

__all__ = [
    "AgentCoordinator",
    "CompletedSoFar",
    "DecomposingCoordinator",
    "SubtaskDecision",
    "is_coordinator",
]
