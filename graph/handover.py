"""How a phase node hands over to the next one: ``Command(update=..., goto=...)``.

The next phase is decided by :func:`toolweave.graph.walk.next_step` on the state
as it will be once the node's update is applied. Deciding it in the node, rather
than in a conditional edge after it, spares LangGraph a full state read per step.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langgraph.types import Command, Overwrite

from toolweave.graph.walk import Phase, next_step

_WALK_KEYS = ("terminal", "clarification", "client_calls", "deep_fallback_done", "coordinators")
"""The plain state keys the walk reads besides ``tasks``."""


def _value(update: Any) -> Any:
    return update.value if isinstance(update, Overwrite) else update


def state_after(state: Mapping[str, Any], update: Mapping[str, Any]) -> dict[str, Any]:
    """What :func:`next_step` will see once ``update`` is applied (only the keys it reads)."""
    view = {key: state.get(key) for key in _WALK_KEYS}
    for key in _WALK_KEYS:
        if key in update:
            view[key] = _value(update[key])
    tasks: Mapping[str, Any] = state.get("tasks") or {}
    if "tasks" in update:
        written = update["tasks"]
        tasks = written.value if isinstance(written, Overwrite) else {**tasks, **written}
    view["tasks"] = tasks
    return view


def handover(state: Mapping[str, Any], update: dict[str, Any]) -> Command[Phase]:
    """Apply ``update`` and go to the phase the walk names next."""
    return Command(update=update, goto=next_step(state_after(state, update)).phase)
