"""How a phase node hands over to the next one: ``Command(update=..., goto=...)``.

The walk (:func:`toolweave.graph.walk.next_step`) runs exactly once per step, here,
on the state as it will be once the node's update is applied. That view is built
from the state schema itself: each key's reducer is read from
:class:`~toolweave.state.graph_state.GraphState`'s ``Annotated`` metadata (the same
metadata LangGraph builds its channels from), and a key is merged only when the
walk reads it. The step's task is written to ``cursor``, so the next node reads
its task there instead of walking the tree a second time.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any, get_args, get_origin, get_type_hints

from langgraph.channels import DeltaChannel
from langgraph.types import Command, Overwrite

from toolweave.graph.walk import Phase, next_step
from toolweave.state.graph_state import GraphState

Reducer = Callable[[Any, Any], Any]


def _empty(annotation: Any) -> Any:
    origin = get_origin(annotation) or annotation
    return origin() if isinstance(origin, type) else None


def _reducer_of(annotation: Any) -> Reducer | None:
    """The binary reducer LangGraph applies to one write of a key, or ``None`` (last value)."""
    metadata = getattr(annotation, "__metadata__", ())
    if not metadata:
        return None
    channel = metadata[-1]
    base = get_args(annotation)[0]
    empty = _empty(base)
    if isinstance(channel, DeltaChannel):
        batch = channel.reducer

        def delta(old: Any, write: Any) -> Any:
            return batch(empty if old is None else old, [write])

        return delta
    if callable(channel):
        binary: Reducer = channel

        def binop(old: Any, write: Any) -> Any:
            return binary(empty if old is None else old, write)

        return binop
    return None


def state_reducers(schema: type[Any] = GraphState) -> dict[str, Reducer | None]:
    """Every key of ``schema`` and its reducer (``None`` for a plain, last-value key)."""
    hints = get_type_hints(schema, include_extras=True)
    return {key: _reducer_of(annotation) for key, annotation in hints.items()}


_REDUCERS = state_reducers()


class StateAfter(Mapping[str, Any]):
    """The state as LangGraph will store it once ``update`` is applied, merged lazily."""

    __slots__ = ("_merged", "_state", "_update")

    def __init__(self, state: Mapping[str, Any], update: Mapping[str, Any]) -> None:
        self._state = state
        self._update = update
        self._merged: dict[str, Any] = {}

    def __getitem__(self, key: str) -> Any:
        if key not in self._update:
            return self._state[key]
        if key not in self._merged:
            self._merged[key] = self._apply(key, self._update[key])
        return self._merged[key]

    def _apply(self, key: str, write: Any) -> Any:
        if isinstance(write, Overwrite):
            return write.value
        reducer = _REDUCERS.get(key)
        return write if reducer is None else reducer(self._state.get(key), write)

    def __iter__(self) -> Iterator[str]:
        yield from self._state
        yield from (key for key in self._update if key not in self._state)

    def __len__(self) -> int:
        return len(self._state) + sum(1 for key in self._update if key not in self._state)


def state_after(state: Mapping[str, Any], update: Mapping[str, Any]) -> Mapping[str, Any]:
    """What :func:`next_step` sees once ``update`` is applied to ``state``."""
    return StateAfter(state, update)


def handover(state: Mapping[str, Any], update: dict[str, Any]) -> Command[Phase]:
    """Apply ``update`` and go to the phase the walk names next, on the task it names."""
    step = next_step(state_after(state, update))
    return Command(update={**update, "cursor": step.task_no}, goto=step.phase)


def current_task_no(state: Mapping[str, Any]) -> str:
    """The task this phase works on: the one the previous hand-over named (``cursor``)."""
    task_no = state.get("cursor")
    if task_no is None:  # a checkpoint from before the hand-over named it
        return next_step(state).task_no
    return str(task_no)
