"""Coordinators: task decomposition, conditional subtasks and (later) deep search."""

from toolweave.coordinators.base import (
    AgentCoordinator,
    CompletedSoFar,
    SubtaskDecision,
    is_coordinator,
)

__all__ = ["AgentCoordinator", "CompletedSoFar", "SubtaskDecision", "is_coordinator"]
