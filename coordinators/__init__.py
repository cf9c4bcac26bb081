"""Coordinators: task decomposition, conditional subtasks and (later) deep search."""
